package natsqueue

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/internal/atomicfile"
)

// OffsetHeader carries a line's byte offset in the executor's log: the
// executor resumes after the last one published, and the message id made
// from it drops a line published twice across a crash.
const OffsetHeader = "Vigil-Offset"

// ExecutorHeader names the executor (its ID) whose log a line is from.
const ExecutorHeader = "Vigil-Executor"

// ErrSeveralExecutors is an audit pull that must name its executor.
var ErrSeveralExecutors = errors.New("several executors publish their audit logs")

// auditFollower publishes the executor's audit log, line by line and
// byte for byte, to VIGIL_AUDIT. The lines are published as they are in
// the file (not re-encoded) so a pulled copy hashes exactly the same.
type auditFollower struct {
	js       jetstream.JetStream
	path     string
	subject  string // this executor's own (AuditSubjectFor)
	executor string
	follow   *audit.Follower // from where the stream ends; nil before start
	sent     int64           // the offset just past the last line published
	stuck    bool
}

// start finds where the stream ends and follows the log from there.
func (a *auditFollower) start(ctx context.Context) error {
	s, err := a.js.Stream(ctx, AuditStream)
	if err != nil {
		return fmt.Errorf("nats stream %s: %w", AuditStream, shown(err))
	}
	m, err := s.GetLastMsgForSubject(ctx, a.subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		a.sent, a.follow = 0, audit.NewFollower(a.path, 0)
		return nil
	}
	if err != nil {
		return fmt.Errorf("nats stream %s: %w", AuditStream, shown(err))
	}
	off, err := strconv.ParseInt(m.Header.Get(OffsetHeader), 10, 64)
	if err != nil {
		return fmt.Errorf("nats stream %s: last message has no %s header", AuditStream, OffsetHeader)
	}
	a.sent = off + int64(len(m.Data)) + 1
	a.follow = audit.NewFollower(a.path, a.sent)
	return nil
}

// publish sends every complete line the follower reads. A line whose
// publish failed is read again next time (the message id drops a line
// that went through twice). A cut log (not the one published: shorter,
// replaced, its last published line changed) is not published further:
// publishing it as a continuation would mix two chains, so it stops and
// says so (a pulled copy then shows the cut).
func (a *auditFollower) publish(ctx context.Context) error {
	if a.stuck || a.follow == nil {
		return nil
	}
	for {
		b, err := a.follow.Read()
		if err != nil {
			return err
		}
		if b.Cut {
			a.stuck = true
			return fmt.Errorf("audit log %s is not the log published up to %d (cut, replaced or rewritten); "+
				"not publishing further", a.path, a.sent)
		}
		for off, data := b.From, b.Data; len(data) > 0; {
			i := bytes.IndexByte(data, '\n')
			if err := a.send(ctx, off, data[:i]); err != nil {
				a.follow.Rewind(off)
				return err
			}
			off += int64(i + 1)
			data = data[i+1:]
		}
		if !b.More {
			return nil
		}
	}
}

// send publishes one line (without its newline) found at off.
func (a *auditFollower) send(ctx context.Context, off int64, line []byte) error {
	msg := nats.NewMsg(a.subject)
	msg.Data = line
	msg.Header.Set(OffsetHeader, strconv.FormatInt(off, 10))
	msg.Header.Set(ExecutorHeader, a.executor)
	id := "audit:" + a.subject + ":" + strconv.FormatInt(off, 10)
	if _, err := a.js.PublishMsg(ctx, msg, jetstream.WithMsgID(id)); err != nil {
		return err
	}
	a.sent = off + int64(len(line)) + 1
	return nil
}

// PullAudit writes every line of the executor's log in VIGIL_AUDIT to w,
// in order, and returns how many. With several executors on the queue it
// is ErrSeveralExecutors, naming them: PullExecutorAudit takes one.
func PullAudit(ctx context.Context, js jetstream.JetStream, w io.Writer) (int, error) {
	ids, err := AuditExecutors(ctx, js)
	if err != nil {
		return 0, err
	}
	switch len(ids) {
	case 0:
		// nothing yet, or only an earlier release's one log
		return pullAuditSubject(ctx, js, AuditSubject, w)
	case 1:
		return pullAuditSubject(ctx, js, AuditSubjectFor(ids[0]), w)
	}
	return 0, fmt.Errorf("%w (%s): name one", ErrSeveralExecutors, strings.Join(ids, ", "))
}

// PullExecutorAudit is PullAudit for the executor with this ID (its
// result-signing key's id, as AuditExecutors lists them).
func PullExecutorAudit(ctx context.Context, js jetstream.JetStream, executorID string, w io.Writer) (int, error) {
	return pullAuditSubject(ctx, js, AuditSubjectFor(executorID), w)
}

// AuditExecutors lists the ids of the executors whose logs VIGIL_AUDIT
// holds, sorted.
func AuditExecutors(ctx context.Context, js jetstream.JetStream) ([]string, error) {
	s, err := js.Stream(ctx, AuditStream)
	if err != nil {
		return nil, fmt.Errorf("nats stream %s: %w", AuditStream, shown(err))
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(AuditSubjects))
	if err != nil {
		return nil, fmt.Errorf("nats stream %s: %w", AuditStream, shown(err))
	}
	var ids []string
	for subj := range info.State.Subjects {
		b, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(subj, "vigil.audit."))
		if err == nil && AuditSubjectFor(string(b)) == subj {
			ids = append(ids, string(b))
		}
	}
	slices.Sort(ids)
	return ids, nil
}

func pullAuditSubject(ctx context.Context, js jetstream.JetStream, subject string, w io.Writer) (int, error) {
	s, err := js.Stream(ctx, AuditStream)
	if err != nil {
		return 0, fmt.Errorf("nats stream %s: %w", AuditStream, shown(err))
	}
	lastMsg, err := s.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("nats stream %s: %w", AuditStream, shown(err))
	}
	last := lastMsg.Sequence
	c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		return 0, err
	}
	n := 0
	var next int64
	for {
		batch, err := c.Fetch(500)
		if err != nil {
			return n, err
		}
		for m := range batch.Messages() {
			md, err := m.Metadata()
			if err != nil {
				return n, err
			}
			off, err := strconv.ParseInt(m.Headers().Get(OffsetHeader), 10, 64)
			if err != nil || off != next {
				return n, fmt.Errorf("nats stream %s: message %d is at offset %q, want %d (a gap in the copy)",
					AuditStream, md.Sequence.Stream, m.Headers().Get(OffsetHeader), next)
			}
			if _, err := w.Write(append(append([]byte(nil), m.Data()...), '\n')); err != nil {
				return n, err
			}
			next += int64(len(m.Data())) + 1
			n++
			if md.Sequence.Stream >= last {
				return n, nil
			}
		}
		if err := batch.Error(); err != nil {
			return n, err
		}
	}
}

// WriteAuditCopy writes a pulled copy of the log into dir as audit.log, with
// the head anchor `vigil audit verify` expects next to a log (the copy's
// last entry and size). The head vouches for nothing by itself: what ties
// the copy to the executor is `audit verify --checkpoint` with a checkpoint
// the executor signed.
func WriteAuditCopy(dir string, data []byte) error {
	logPath := filepath.Join(dir, "audit.log")
	var last audit.Entry
	n := 0
	if len(data) > 0 {
		i := bytes.LastIndexByte(data[:len(data)-1], '\n')
		if err := json.Unmarshal(data[i+1:], &last); err != nil {
			return fmt.Errorf("audit copy: last line: %w", err)
		}
		n = len(data)
	}
	if err := atomicfile.Write(logPath, data, 0o600); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	head, _ := json.Marshal(map[string]any{"seq": last.Seq, "hash": last.Hash, "size": n})
	return atomicfile.Write(audit.HeadPath(logPath), head, 0o600)
}
