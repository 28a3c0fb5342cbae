package natsqueue

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/audit"
)

// recordingJS takes the audit follower's publishes (every other method is
// the nil interface's: not called here); fail makes that many publishes
// fail once failFrom lines went through.
type recordingJS struct {
	jetstream.JetStream
	fail, failFrom int
	offs           []int64
	data           []string
}

func (r *recordingJS) PublishMsg(_ context.Context, m *nats.Msg, _ ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	if r.fail > 0 && len(r.offs) >= r.failFrom {
		r.fail--
		return nil, errors.New("nats: timeout")
	}
	off, _ := strconv.ParseInt(m.Header.Get(OffsetHeader), 10, 64)
	r.offs = append(r.offs, off)
	r.data = append(r.data, string(m.Data))
	return &jetstream.PubAck{}, nil
}

func appendEntries(t *testing.T, log *audit.Log, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if _, err := log.Append(audit.Entry{Actor: "x", Event: audit.EventDenied, TaskID: id}); err != nil {
			t.Fatal(err)
		}
	}
}

// A publish that fails leaves its line to the next pass: every line goes
// out once, in order, each at its offset in the log, with no gap.
func TestAuditFollowerRepublishesAfterAFailedPublish(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	log, err := audit.Open(path, func() time.Time { return time.Unix(1e9, 0) })
	if err != nil {
		t.Fatal(err)
	}
	js := &recordingJS{}
	a := &auditFollower{js: js, path: path, subject: AuditSubjectFor("e"), executor: "e", follow: audit.NewFollower(path, 0)}
	appendEntries(t, log, "a", "b", "c")
	js.fail, js.failFrom = 1, 1 // the second line fails
	if err := a.publish(context.Background()); err == nil {
		t.Fatal("a failed publish was not reported")
	}
	if err := a.publish(context.Background()); err != nil {
		t.Fatal(err)
	}
	appendEntries(t, log, "d")
	if err := a.publish(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(b), "\n")
	lines = lines[:len(lines)-1]
	if len(js.data) != len(lines) {
		t.Fatalf("published %d lines, the log has %d", len(js.data), len(lines))
	}
	off := int64(0)
	for i, l := range lines {
		if js.offs[i] != off || js.data[i] != strings.TrimSuffix(l, "\n") {
			t.Fatalf("line %d published at %d as %q, want %d %q", i, js.offs[i], js.data[i], off, l)
		}
		off += int64(len(l))
	}
}

// A log rewritten in place under the follower (the same file, longer, not
// the lines published) is a cut: it stops publishing and says so, rather
// than publish the new log as a continuation of the old chain.
func TestAuditFollowerStopsAtACut(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	clock := func() time.Time { return time.Unix(1e9, 0) }
	log, err := audit.Open(path, clock)
	if err != nil {
		t.Fatal(err)
	}
	js := &recordingJS{}
	a := &auditFollower{js: js, path: path, subject: AuditSubjectFor("e"), executor: "e", follow: audit.NewFollower(path, 0)}
	appendEntries(t, log, "a", "b")
	if err := a.publish(context.Background()); err != nil || len(js.data) != 2 {
		t.Fatalf("%d published, %v", len(js.data), err)
	}
	other := filepath.Join(dir, "other.log")
	olog, _ := audit.Open(other, clock)
	appendEntries(t, olog, "x-longer-id", "y-longer-id", "z")
	b, _ := os.ReadFile(other)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	err = a.publish(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not publishing further") {
		t.Fatalf("a rewritten log: %v", err)
	}
	appendEntries(t, olog, "w")
	b, _ = os.ReadFile(other)
	os.WriteFile(path, b, 0o600)
	if err := a.publish(context.Background()); err != nil || len(js.data) != 2 {
		t.Fatalf("published after the cut: %d lines, %v", len(js.data), err)
	}
}
