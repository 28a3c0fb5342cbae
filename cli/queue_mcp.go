package cli

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/exec/task"
)

// queueMCPPoll is how often a waiting MCP call (or `vigil result --wait`)
// re-reads the task's view besides the bucket watch that wakes it on each
// change: a backstop for a watch that missed an update across a reconnect.
const queueMCPPoll = 500 * time.Millisecond

// mcpQueueTasks connects `vigil mcp`'s task tools to the shared queue as
// an agent.
func mcpQueueTasks(ctx context.Context, app *App) (approval.Submitter, func(), error) {
	key, err := agentOperatorKey(app)
	if err != nil {
		return nil, nil, err
	}
	r, err := openRemote(ctx, app, "agent")
	if err != nil {
		return nil, nil, err
	}
	t := natsqueue.AgentTasks{Client: r.c, VerdictWait: remoteSubmitWait, OperatorKey: key}
	return t, r.Close, nil
}

// agentOperatorKey is the executor's operator public key when this home
// holds a copy (keys/operator.pub.pem): results from the shared queue are
// then checked against it. Nil when there is none.
func agentOperatorKey(app *App) (ed25519.PublicKey, error) {
	p := filepath.Join(app.Paths.Keys, lease.OperatorPubFile)
	pub, err := task.LoadPublicKey(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return pub, nil
}
