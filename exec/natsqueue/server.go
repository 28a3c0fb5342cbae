package natsqueue

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The oldest nats-server Vigil works with. 2.10 brought consumers filtered
// on several subjects, which each executor's consumer is (one subject per
// device it serves, claim.go); 2.9 refuses them ("multiple consumer filter
// subjects not supported by nats-server"), so on 2.9 no executor could ever
// take a submission.
const (
	MinServerMajor = 2
	MinServerMinor = 10
)

// GetServer says how to get a server new enough, for the messages that
// refuse an older one.
const GetServer = "install the release binary from the nats-server project's releases, or " +
	"`go install github.com/nats-io/nats-server/v2@latest`; docs/queue.md, \"Running a server\""

// ServerTooOldError is a server older than MinServerMajor.MinServerMinor.
// Every role refuses it at connect (Connect, CheckServer): trying again
// cannot help, so `vigil serve` stops on it.
type ServerTooOldError struct {
	Version string
	URL     string // without credentials
}

func (e *ServerTooOldError) Error() string {
	return fmt.Sprintf("nats-server %s at %s is too old: Vigil needs %d.%d or newer (%s)", e.Version, e.URL,
		MinServerMajor, MinServerMinor, GetServer)
}

// NoJetStreamError is a server that runs without JetStream, which holds
// every stream and the bucket of the shared queue.
type NoJetStreamError struct {
	Version string
	URL     string
}

func (e *NoJetStreamError) Error() string {
	return fmt.Sprintf("nats-server %s at %s runs without JetStream, which the shared queue needs: start it with "+
		"-js, or with a jetstream {} block in its config (docs/queue.md)", e.Version, e.URL)
}

// ErrNotConnected is a connection that is down (reconnecting) when asked
// about its server.
var ErrNotConnected = errors.New("not connected to the NATS server")

// ServerInfo is what the connected server said of itself (its INFO).
type ServerInfo struct {
	URL       string `json:"url"` // as connected to, credentials redacted
	Version   string `json:"version"`
	Name      string `json:"name,omitempty"`
	Cluster   string `json:"cluster,omitempty"`
	JetStream bool   `json:"jetstream"`
}

// Server describes the server nc is connected to; ErrNotConnected while it
// is not.
func Server(nc *nats.Conn) (ServerInfo, error) {
	v := nc.ConnectedServerVersion() // "" unless connected
	if v == "" {
		return ServerInfo{}, ErrNotConnected
	}
	js, _ := nc.ConnectedServerJetStream()
	// what the server says of itself reaches people (doctor, /healthz,
	// the refusals): shown as any server text is
	return ServerInfo{URL: shownText(nc.ConnectedUrlRedacted()), Version: shownText(v),
		Name: shownText(nc.ConnectedServerName()), Cluster: shownText(nc.ConnectedClusterName()), JetStream: js}, nil
}

// CheckServer refuses a server Vigil cannot work with: older than 2.10
// (*ServerTooOldError) or without JetStream (*NoJetStreamError).
// ErrNotConnected while the connection is down.
func CheckServer(nc *nats.Conn) error {
	info, err := Server(nc)
	if err != nil {
		return err
	}
	return info.Check()
}

// Check is CheckServer on what the server said. A version that cannot be
// read (a developer's build) is let through: the features then answer
// for themselves.
func (i ServerInfo) Check() error {
	if major, minor, ok := serverVersion(i.Version); ok &&
		(major < MinServerMajor || major == MinServerMajor && minor < MinServerMinor) {
		return &ServerTooOldError{Version: i.Version, URL: i.URL}
	}
	if !i.JetStream {
		return &NoJetStreamError{Version: i.Version, URL: i.URL}
	}
	return nil
}

var versionRE = regexp.MustCompile(`^v?(\d+)\.(\d+)(\.\d+)?`)

// serverVersion reads major and minor from "2.9.10", "v2.11.0-RC.1", …
func serverVersion(v string) (major, minor int, ok bool) {
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(m[1])
	minor, err2 := strconv.Atoi(m[2])
	return major, minor, err1 == nil && err2 == nil
}

// CheckStreams says whether the streams and the bucket Vigil uses are
// there: a server restarted on an empty store, or an administrator's
// `nats stream rm`, leaves the queue unusable until the executor creates
// them again. It only reads (every role may), so /healthz and `vigil
// doctor` can call it.
func CheckStreams(ctx context.Context, js jetstream.JetStream) error {
	for _, name := range []string{SubmitStream, AuditStream, "KV_" + TasksBucket} {
		if _, err := js.Stream(ctx, name); err != nil {
			if errors.Is(err, jetstream.ErrStreamNotFound) {
				return fmt.Errorf("stream %s is missing (`vigil serve` on the devices' host creates it when it starts)", name)
			}
			return fmt.Errorf("stream %s: %w", name, shown(refused(js, err)))
		}
	}
	return nil
}
