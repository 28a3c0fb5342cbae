package natsqueue_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/internal/testwait"
)

// auditSubject is the rig's executor's audit subject, once it published.
func (r *rig) auditSubject() string {
	r.t.Helper()
	var id string
	testwait.For(r.t, 30*time.Second, func() error {
		ids, err := natsqueue.AuditExecutors(context.Background(), r.js)
		if err != nil || len(ids) != 1 {
			return fmt.Errorf("no executor's audit subject: %v %v", ids, err)
		}
		id = ids[0]
		return nil
	})
	return natsqueue.AuditSubjectFor(id)
}

// runMirror runs a mirror of the rig's executor's audit log into path
// until the returned stop is called; stop reports what Run returned.
func (r *rig) runMirror(path string) (stop func() error) {
	r.t.Helper()
	m := &natsqueue.AuditMirror{JS: r.connect(), Path: path, Subject: r.auditSubject()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	r.t.Cleanup(func() { _ = stop() })
	return stop
}

// waitCopy waits until the copy is the executor's log byte for byte.
func (r *rig) waitCopy(path string) []byte {
	r.t.Helper()
	var got []byte
	testwait.For(r.t, 30*time.Second, func() error {
		want, _ := os.ReadFile(r.env.AuditPath())
		got, _ = os.ReadFile(path)
		if len(want) == 0 || !bytes.Equal(got, want) {
			return fmt.Errorf("the copy is not the executor's log:\ncopy %d bytes\nlog %d bytes", len(got), len(want))
		}
		return nil
	})
	return got
}

func verifies(t *testing.T, path string) audit.Report {
	t.Helper()
	rep, err := audit.Verify(path)
	if err != nil || !rep.OK {
		t.Fatalf("the copy does not verify: %+v %v", rep, err)
	}
	return rep
}

// TestAuditMirrorFollowsTheExecutorsLog: the executor's entries appear in
// the operator's copy as they are written, byte for byte, and the copy
// verifies as a log (its head anchors its end).
func TestAuditMirrorFollowsTheExecutorsLog(t *testing.T) {
	r := newRig(t)
	path := filepath.Join(t.TempDir(), "queue-audit", "audit.log")
	r.submit("mir-1")
	r.runMirror(path)
	r.waitCopy(path)
	verifies(t, path)
	// entries written while the mirror runs follow
	r.submit("mir-2")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, _, err := r.c.Get(ctx, "mir-2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.c.Decide(ctx, "mir-2", decision("operator:ada@laptop", true, v.PreviewHash)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.c.Outcome(ctx, "mir-2", ""); err != nil {
		t.Fatal(err)
	}
	got := r.waitCopy(path)
	rep := verifies(t, path)
	if rep.Entries < 4 || !bytes.Contains(got, []byte(`operator:ada@laptop`)) {
		t.Fatalf("%d entries; the decision is not in the copy:\n%s", rep.Entries, got)
	}
}

// TestAuditMirrorResumesWithoutDuplicates: a mirror stopped and started
// again (and one whose position file is lost, and one that left a torn
// tail) continues the copy: no line twice, none missing, the chain intact.
func TestAuditMirrorResumesWithoutDuplicates(t *testing.T) {
	r := newRig(t)
	path := filepath.Join(t.TempDir(), "audit.log")
	r.submit("res-1")
	stop := r.runMirror(path)
	r.waitCopy(path)
	if err := stop(); err != nil {
		t.Fatalf("mirror: %v", err)
	}
	// entries while no mirror runs; then a restart from the position
	r.submit("res-2")
	stop = r.runMirror(path)
	r.waitCopy(path)
	if err := stop(); err != nil {
		t.Fatalf("mirror: %v", err)
	}
	verifies(t, path)
	// the position lost (a crash between the append and its write): the
	// restart reads from the stream's start and skips what the copy holds
	if err := os.Remove(path + ".mirror"); err != nil {
		t.Fatal(err)
	}
	r.submit("res-3")
	stop = r.runMirror(path)
	r.waitCopy(path)
	if err := stop(); err != nil {
		t.Fatalf("mirror: %v", err)
	}
	// a torn tail of an append cut short: cut, then the line written whole
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":99,"ts":"2026-`)
	f.Close()
	r.submit("res-4")
	r.runMirror(path)
	r.waitCopy(path)
	verifies(t, path)
}

// TestAuditMirrorRefusesAnotherLog: a copy whose recorded position the
// stream does not hold (the stream made again from another log) is not
// continued as if it were the same chain.
func TestAuditMirrorRefusesAnotherLog(t *testing.T) {
	r := newRig(t)
	path := filepath.Join(t.TempDir(), "audit.log")
	r.submit("other-1")
	stop := r.runMirror(path)
	r.waitCopy(path)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// the copy's last line replaced by another (same length, so the size
	// still matches the position)
	b, _ := os.ReadFile(path)
	i := bytes.LastIndex(b[:len(b)-1], []byte("\n")) + 1
	b[i+len(`{"seq":`)+3] ^= 1
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	m := &natsqueue.AuditMirror{JS: r.connect(), Path: path, Subject: r.auditSubject()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := m.Run(ctx)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("another log")) {
		t.Fatalf("Run over another log's copy: %v", err)
	}
}

// TestAuditMirrorKeepsToOneExecutor: a copy of one executor's log is not
// continued from another subject's messages.
func TestAuditMirrorKeepsToOneExecutor(t *testing.T) {
	r := newRig(t)
	path := filepath.Join(t.TempDir(), "audit.log")
	r.submit("one-1")
	stop := r.runMirror(path)
	r.waitCopy(path)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if got, want := natsqueue.CopiedSubject(path), r.auditSubject(); got != want {
		t.Fatalf("copied subject %q, want %q", got, want)
	}
	m := &natsqueue.AuditMirror{JS: r.connect(), Path: path, Subject: natsqueue.AuditSubjectFor("another-executor")}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Run(ctx); err == nil || !strings.Contains(err.Error(), "another executor's log") {
		t.Fatalf("Run on another executor's copy: %v", err)
	}
}

// TestExecutorPublishesTheLogWhenItChanges: an entry appended to the
// executor's log reaches VIGIL_AUDIT with nothing else happening (the
// executor's poll is an hour): the log's change wakes its follower.
func TestExecutorPublishesTheLogWhenItChanges(t *testing.T) {
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(20 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	r := &rig{t: t, url: s.ClientURL(), env: approvaltest.New(t)}
	js := r.connect()
	ctx, cancel := context.WithCancel(context.Background())
	ex, err := natsqueue.NewExecutor(ctx, natsqueue.ExecutorOptions{JS: r.connect(), Queue: r.env.Queue,
		AuditPath: r.env.AuditPath(), Host: "exec-host", Devices: []string{"living-room"}, ID: "exec-1", Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ex.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("executor: %v", err)
		}
	}()
	var stream jetstream.Stream
	testwait.For(t, 20*time.Second, func() (err error) {
		stream, err = js.Stream(ctx, natsqueue.AuditStream)
		return err
	})
	subject := natsqueue.AuditSubjectFor("exec-1")
	published := func(id string) {
		t.Helper()
		if _, err := r.env.Audit.Append(audit.Entry{Actor: "x", Event: audit.EventDenied, TaskID: id}); err != nil {
			t.Fatal(err)
		}
		testwait.For(t, 10*time.Second, func() error {
			m, err := stream.GetLastMsgForSubject(ctx, subject)
			if err != nil || !bytes.Contains(m.Data, []byte(`"`+id+`"`)) {
				return fmt.Errorf("the appended entry %s is not in the stream: %v", id, err)
			}
			return nil
		})
	}
	published("first") // the executor's start may publish this one
	published("woken") // only the log's change can
}
