package natsqueue

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
)

// ErrNoTask means the bucket has no view of that task.
var ErrNoTask = errors.New("no such task in the shared queue")

// LostError is a decision that came second: another was made first. It is
// the engine's approval.LostError, so a screen recognises it without
// knowing the transport.
type LostError = approval.LostError

// Client is an agent's or an operator's side of the shared queue.
type Client struct {
	js jetstream.JetStream
	kv jetstream.KeyValue
	// Agent is the [[agents]] name the executor knows this agent by, when
	// its NATS user may publish on that agent's subjects (docs/queue.md):
	// its device submissions then go to AgentSubjectFor, and the executor
	// mints the lease of one that carries none under the agent's grants.
	// Empty: the shared subjects, where every submission brings its lease.
	Agent string
}

// NewClient binds to the streams and bucket (creating them if this is the
// first Vigil to reach the server).
func NewClient(ctx context.Context, js jetstream.JetStream) (*Client, error) {
	return Layout{}.NewClient(ctx, js)
}

// NewClient is the package's NewClient, making what is missing with l.
func (l Layout) NewClient(ctx context.Context, js jetstream.JetStream) (*Client, error) {
	kv, err := l.Setup(ctx, js)
	if err != nil {
		return nil, err
	}
	return &Client{js: js, kv: kv}, nil
}

// Publish sends a manifest to the executor. A resend of the same bytes
// within DedupeWindow is dropped by the server (the verdict is already, or
// will be, under the same key).
func (c *Client) Publish(ctx context.Context, raw []byte) (string, error) {
	return c.PublishFrom(ctx, raw, "")
}

// PublishFrom is Publish naming where the manifest came from (an MCP
// client, "mcp:<name>"), so the executor records it as a local submit would.
// The source is not part of the dedupe key: a resend is the same request.
// The subject is the manifest's device's (SubjectFor), so the executor
// serving that device takes it.
func (c *Client) PublishFrom(ctx context.Context, raw []byte, source string) (string, error) {
	digest := Digest(raw)
	subject := SubjectFor(raw)
	if c.Agent != "" && subject != SubmitSubject {
		subject += AgentSubjectInfix + base64.RawURLEncoding.EncodeToString([]byte(c.Agent))
	}
	msg := nats.NewMsg(subject)
	msg.Data = raw
	if source != "" {
		msg.Header.Set(SourceHeader, source)
	}
	if _, err := c.js.PublishMsg(ctx, msg, jetstream.WithMsgID(digest)); err != nil {
		return "", publishError(err)
	}
	return digest, nil
}

// ErrSubmitRefused is a submission the submit stream's bounds refused
// (SubmitMaxMsgSize, SubmitMaxPerSubject, SubmitMaxBytes): nothing was
// queued, and what waited before still waits.
var ErrSubmitRefused = errors.New("the shared queue refused the submission")

// publishError says which bound refused a submission, if one did.
func publishError(err error) error {
	var why string
	switch msg := err.Error(); {
	case strings.Contains(msg, "message size exceeds maximum"), errors.Is(err, nats.ErrMaxPayload):
		why = fmt.Sprintf("the manifest is too large (at most %d bytes)", task.MaxManifestBytes)
	case strings.Contains(msg, "maximum messages per subject exceeded"):
		why = fmt.Sprintf("%d submissions already wait for this device: is the executor serving it running, "+
			"and does its config list the device?", SubmitMaxPerSubject)
	case strings.Contains(msg, "maximum bytes exceeded"), strings.Contains(msg, "maximum messages exceeded"):
		why = fmt.Sprintf("the stream %s is full (%d MiB of submissions wait for their executors): try again once "+
			"they have taken theirs", SubmitStream, SubmitMaxBytes>>20)
	default:
		return fmt.Errorf("nats publish: %w", shown(err))
	}
	return fmt.Errorf("%w: %s (%v)", ErrSubmitRefused, why, shown(err))
}

// Verdict waits until the executor answered the manifest with that digest.
func (c *Client) Verdict(ctx context.Context, digest string) (Verdict, error) {
	w, err := c.kv.Watch(ctx, VerdictKey(digest))
	if err != nil {
		return Verdict{}, shown(err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return Verdict{}, ctx.Err()
		case ent, ok := <-w.Updates():
			if !ok {
				return Verdict{}, errors.New("nats watch ended")
			}
			if ent == nil || ent.Operation() != jetstream.KeyValuePut {
				continue
			}
			var v Verdict
			if err := json.Unmarshal(ent.Value(), &v); err != nil {
				return Verdict{}, fmt.Errorf("verdict: %w", shown(err))
			}
			return v, nil
		}
	}
}

// Get reads one task's view and its revision.
func (c *Client) Get(ctx context.Context, id string) (TaskView, uint64, error) {
	ent, err := c.kv.Get(ctx, TaskKey(id))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return TaskView{}, 0, fmt.Errorf("task %s: %w", id, ErrNoTask)
	}
	if err != nil {
		return TaskView{}, 0, shown(err)
	}
	var v TaskView
	if err := json.Unmarshal(ent.Value(), &v); err != nil {
		return TaskView{}, 0, fmt.Errorf("task %s: view: %w", id, shown(err))
	}
	return v, ent.Revision(), nil
}

// List returns every task's view (one pass over the bucket's latest values).
func (c *Client) List(ctx context.Context) ([]TaskView, error) {
	w, err := c.kv.Watch(ctx, "task.>", jetstream.IgnoreDeletes())
	if err != nil {
		return nil, shown(err)
	}
	defer w.Stop()
	var out []TaskView
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case ent, ok := <-w.Updates():
			if !ok {
				return nil, errors.New("nats watch ended")
			}
			if ent == nil {
				return out, nil // the initial values are all in
			}
			var v TaskView
			if json.Unmarshal(ent.Value(), &v) == nil && TaskKey(v.Record.TaskID) == ent.Key() {
				out = append(out, v)
			}
		}
	}
}

// Decide puts d on the task's view with a compare-and-set on the revision
// read: of several operators deciding at once, one wins and the others get
// a *LostError naming who. An approval whose preview hash is not the one
// published gets approval.ErrPreviewChanged. The executor applies the
// decision (Outcome waits for that).
func (c *Client) Decide(ctx context.Context, id string, d Decision) (TaskView, error) {
	for range 50 {
		v, rev, err := c.Get(ctx, id)
		if err != nil {
			return v, err
		}
		if v.Decided() {
			return v, &LostError{TaskID: id, State: v.Record.State, By: v.Winner()}
		}
		if d.Approve && d.PreviewHash != v.PreviewHash {
			return v, approval.ErrPreviewChanged
		}
		v.Decision = &d
		b, _ := json.Marshal(v)
		_, err = c.kv.Update(ctx, TaskKey(id), b, rev)
		if err == nil {
			return v, nil
		}
		if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return v, fmt.Errorf("nats: %w", shown(err))
		}
		// someone wrote first: read again (a decision → lost; the
		// executor refreshing the view → try again)
	}
	return TaskView{}, fmt.Errorf("task %s: the view kept changing; try again", id)
}

// Outcome waits until the executor has applied (or refused) the decision
// with that id, and returns the view then.
func (c *Client) Outcome(ctx context.Context, id, decisionID string) (TaskView, error) {
	w, err := c.kv.Watch(ctx, TaskKey(id))
	if err != nil {
		return TaskView{}, shown(err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return TaskView{}, ctx.Err()
		case ent, ok := <-w.Updates():
			if !ok {
				return TaskView{}, errors.New("nats watch ended")
			}
			if ent == nil || ent.Operation() != jetstream.KeyValuePut {
				continue
			}
			var v TaskView
			if json.Unmarshal(ent.Value(), &v) != nil {
				continue
			}
			if v.Decision != nil && v.Decision.ID == decisionID {
				continue // not applied yet
			}
			if v.Record.State != approval.Pending || (v.Refused != nil && v.Refused.DecisionID == decisionID) {
				return v, nil
			}
		}
	}
}

// Watch follows every task view (the initial values, then each change),
// for an operator screen.
func (c *Client) Watch(ctx context.Context) (jetstream.KeyWatcher, error) {
	w, err := c.kv.Watch(ctx, "task.>")
	return w, shown(err)
}
