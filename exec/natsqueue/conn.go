package natsqueue

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/vigil-dev/vigil/config"
)

// ConnectOptions say how to reach the server.
type ConnectOptions struct {
	Queue  config.QueueConfig // resolved and validated
	Getenv func(string) string
	Name   string // the client name the server shows (vigil serve@host, …)
	// Wait keeps trying to connect and reconnect for ever (the executor);
	// otherwise a server that cannot be reached is an error at once.
	Wait bool
	// Role is RoleAgent, RoleOperator or RoleExecutor; it picks the inbox
	// prefix the server's permissions expect (InboxPrefix). Empty is
	// RoleOperator.
	Role string
	// Connected, Disconnected and Reconnected are called (one at a time,
	// off the caller's goroutine) when the first connection is made — at
	// once, or later with Wait —, when it is lost, and when it is back.
	Connected    func(*nats.Conn)
	Disconnected func(*nats.Conn, error)
	Reconnected  func(*nats.Conn)
}

// The roles over the shared queue (docs/queue.md).
const (
	RoleAgent    = "agent"
	RoleOperator = "operator"
	RoleExecutor = "executor"
)

// InboxPrefix is where a role's replies (JetStream API answers, publish
// acknowledgements, watch and consumer deliveries) arrive. Each role has
// its own because whoever may subscribe to an inbox reads what arrives
// there: the executor's pull consumer delivers raw manifests (leases,
// secrets) to its inbox, so no agent or operator may subscribe to it, and
// the default _INBOX.> would have to be open to all. Each user's
// permissions allow subscribing to its role's prefix only.
func InboxPrefix(role string) string {
	switch role {
	case RoleAgent:
		return "_INBOX_vigil_agent"
	case RoleExecutor:
		return "_INBOX_vigil_executor"
	}
	return "_INBOX_vigil_operator"
}

// Connect opens a connection with the [queue] credentials. Credentials come
// from files and the environment, never from the URL or the config's text.
// Unless it waits, a server Vigil cannot work with (CheckServer: older
// than 2.10, or no JetStream) is refused here, before anything is sent;
// with Wait the caller checks in Connected and Reconnected.
func Connect(o ConnectOptions) (*nats.Conn, error) {
	q := o.Queue
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	opts := []nats.Option{nats.Name(o.Name), nats.Timeout(5 * time.Second), nats.ReconnectWait(500 * time.Millisecond),
		nats.MaxReconnects(-1), nats.CustomInboxPrefix(InboxPrefix(o.Role))}
	if o.Wait {
		opts = append(opts, nats.RetryOnFailedConnect(true))
	}
	if o.Connected != nil {
		opts = append(opts, nats.ConnectHandler(o.Connected))
	}
	if o.Disconnected != nil {
		opts = append(opts, nats.DisconnectErrHandler(o.Disconnected))
	}
	if o.Reconnected != nil {
		opts = append(opts, nats.ReconnectHandler(o.Reconnected))
	}
	auth, err := Credentials(q, getenv)
	if err != nil {
		return nil, err
	}
	// a server's refusal can echo what this process sent it: every copy
	// of the token or password is masked in what is shown
	var sent []string
	for _, env := range []string{q.TokenEnv, q.PasswordEnv} {
		if env != "" {
			sent = append(sent, getenv(env))
		}
	}
	opts = append(opts, auth...)
	if q.CAFile != "" {
		opts = append(opts, nats.RootCAs(q.CAFile))
	}
	if q.CertFile != "" {
		opts = append(opts, nats.ClientCert(q.CertFile, q.KeyFile))
	}
	nc, err := nats.Connect(q.URL, opts...)
	if err != nil {
		// the URL carries no credentials (config refuses them), so it may be shown
		return nil, fmt.Errorf("queue.url: cannot reach %s: %w", strings.TrimSpace(q.URL), shown(err, sent...))
	}
	if !o.Wait {
		// ErrNotConnected (lost already) is let through: a reconnect
		// follows, and what fails then says so
		if err := CheckServer(nc); err != nil && !errors.Is(err, ErrNotConnected) {
			nc.Close()
			return nil, err
		}
	}
	return nc, nil
}

// Credentials are the connection options [queue] names: a creds file, or a
// token or user/password read from the environment. An empty variable is
// an error naming the key (a config problem, caught before connecting).
func Credentials(q config.QueueConfig, getenv func(string) string) ([]nats.Option, error) {
	switch {
	case q.CredsFile != "":
		return []nats.Option{nats.UserCredentials(q.CredsFile)}, nil
	case q.TokenEnv != "":
		tok := getenv(q.TokenEnv)
		if tok == "" {
			return nil, fmt.Errorf("queue.token_env: the environment variable %s is empty or unset", q.TokenEnv)
		}
		return []nats.Option{nats.Token(tok)}, nil
	case q.UserEnv != "":
		u, p := getenv(q.UserEnv), getenv(q.PasswordEnv)
		if u == "" {
			return nil, fmt.Errorf("queue.user_env: the environment variable %s is empty or unset", q.UserEnv)
		}
		if p == "" {
			return nil, fmt.Errorf("queue.password_env: the environment variable %s is empty or unset", q.PasswordEnv)
		}
		return []nats.Option{nats.UserInfo(u, p)}, nil
	}
	return nil, nil
}

// OperatorName is who an operator's decisions are recorded as: the NATS
// user when the credentials name one, else the local user at this host.
func OperatorName(q config.QueueConfig, getenv func(string) string, localUser, host string) string {
	if q.UserEnv != "" && getenv != nil {
		if u := getenv(q.UserEnv); u != "" {
			return "operator:" + u
		}
	}
	return "operator:" + localUser + "@" + host
}
