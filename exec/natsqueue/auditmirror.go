package natsqueue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/internal/atomicfile"
)

// mirrorBatch is the most lines one append of the mirror writes.
const mirrorBatch = 500

// AuditMirror follows VIGIL_AUDIT into a file on an operator's host, so an
// operator's Audit pane shows (and verifies the chain of) the executor's
// log: the file is the executor's log byte for byte, with the head anchor
// a log keeps (audit.HeadPath), appended to and never rewritten.
//
// Each batch of lines is one append, fsynced before the head and the
// mirror's position (Path + ".mirror": the stream sequence and the size it
// reached) are replaced. A restart resumes from that position, and skips
// any line the file already holds (messages carry their offset in the
// executor's log, which is the offset in the copy), so a crash between the
// append and the position never duplicates a line. The only bytes ever
// removed are a torn tail of the mirror's own append cut short by a crash,
// before anything is appended after it.
type AuditMirror struct {
	JS   jetstream.JetStream
	Path string
	// Subject is the one executor's log to copy: AuditSubjectFor(its ID),
	// or AuditSubject for an earlier release's one log. A copy holds one
	// executor's log and is never continued from another's.
	Subject string
}

// mirrorPos is where the mirror got to.
type mirrorPos struct {
	Subject   string `json:"subject"`
	StreamSeq uint64 `json:"stream_seq"`
	Size      int64  `json:"size"`
}

// CopiedSubject is the subject the copy at path was made from, as its
// position records it ("" when there is none yet).
func CopiedSubject(path string) string {
	p, _ := (&AuditMirror{Path: path}).readPos()
	return p.Subject
}

// PosPath is where the mirror records its position.
func (m *AuditMirror) PosPath() string { return m.Path + ".mirror" }

// Run mirrors the stream until ctx ends (nil then) or the stream and the
// copy disagree (a gap, or another log than the one the copy was made from).
func (m *AuditMirror) Run(ctx context.Context) error {
	if m.Subject == "" {
		return errors.New("audit mirror: no subject (which executor's log to copy)")
	}
	if err := os.MkdirAll(filepath.Dir(m.Path), 0o700); err != nil {
		return err
	}
	next, err := m.recover()
	if err != nil {
		return err
	}
	s, err := m.JS.Stream(ctx, AuditStream)
	if err != nil {
		return fmt.Errorf("nats stream %s: %w", AuditStream, shown(err))
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{m.Subject}}
	pos, ok := m.readPos()
	if ok && pos.Subject != "" && pos.Subject != m.Subject {
		return fmt.Errorf("the audit copy %s is of another executor's log (%s, not %s); move it aside to copy this one",
			m.Path, pos.Subject, m.Subject)
	}
	if ok && pos.Size == next && pos.StreamSeq > 0 {
		if err := m.checkResume(ctx, s, pos); err != nil {
			return err
		}
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, pos.StreamSeq+1
	}
	c, err := s.OrderedConsumer(ctx, cfg)
	if err != nil {
		return fmt.Errorf("nats stream %s: %w", AuditStream, shown(err))
	}
	msgs := make(chan jetstream.Msg, mirrorBatch)
	cc, err := c.Consume(func(msg jetstream.Msg) {
		select {
		case msgs <- msg:
		case <-ctx.Done():
		}
	})
	if err != nil {
		return fmt.Errorf("nats stream %s: %w", AuditStream, shown(err))
	}
	defer cc.Stop()
	f, err := os.OpenFile(m.Path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		var batch []jetstream.Msg
		select {
		case <-ctx.Done():
			return nil
		case msg := <-msgs:
			batch = append(batch, msg)
		}
	drain:
		for len(batch) < mirrorBatch {
			select {
			case msg := <-msgs:
				batch = append(batch, msg)
			default:
				break drain
			}
		}
		if next, err = m.append(f, batch, next); err != nil {
			return err
		}
	}
}

// append writes the batch's lines the copy does not hold yet as one
// append, then the head and the position. It returns the copy's new size.
func (m *AuditMirror) append(f *os.File, batch []jetstream.Msg, next int64) (int64, error) {
	var buf bytes.Buffer
	var seq uint64
	var last []byte
	for _, msg := range batch {
		md, err := msg.Metadata()
		if err != nil {
			return next, err
		}
		off, err := strconv.ParseInt(msg.Headers().Get(OffsetHeader), 10, 64)
		if err != nil {
			return next, fmt.Errorf("nats stream %s: message %d has no %s header", AuditStream, md.Sequence.Stream, OffsetHeader)
		}
		at := next + int64(buf.Len())
		switch {
		case off < at:
			continue // the copy holds it already (a restart resumed before it)
		case off > at:
			return next, fmt.Errorf("nats stream %s: message %d is at offset %d, the copy at %d (a gap in the copy)",
				AuditStream, md.Sequence.Stream, off, at)
		}
		buf.Write(msg.Data())
		buf.WriteByte('\n')
		seq, last = md.Sequence.Stream, msg.Data()
	}
	if buf.Len() == 0 {
		return next, nil
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		return next, err
	}
	if err := f.Sync(); err != nil {
		return next, err
	}
	next += int64(buf.Len())
	if err := writeHead(m.Path, last, next); err != nil {
		return next, err
	}
	b, _ := json.Marshal(mirrorPos{Subject: m.Subject, StreamSeq: seq, Size: next})
	return next, atomicfile.Write(m.PosPath(), b, 0o600)
}

// recover cuts a torn tail the mirror's own append left and makes the head
// name the copy's last line; it returns the copy's size.
func (m *AuditMirror) recover() (int64, error) {
	end, err := audit.EndOfCompleteLines(m.Path)
	if err != nil {
		return 0, err
	}
	fi, err := os.Stat(m.Path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if fi.Size() > end {
		if err := os.Truncate(m.Path, end); err != nil {
			return 0, err
		}
	}
	if end == 0 {
		return 0, nil
	}
	last, err := lastLine(m.Path, end)
	if err != nil {
		return 0, err
	}
	return end, writeHead(m.Path, last, end)
}

// checkResume makes sure the stream still holds, at the recorded sequence,
// the copy's last line: a stream made again from another log would
// otherwise be skipped silently up to the copy's size.
func (m *AuditMirror) checkResume(ctx context.Context, s jetstream.Stream, pos mirrorPos) error {
	raw, err := s.GetMsg(ctx, pos.StreamSeq)
	if err != nil {
		return fmt.Errorf("nats stream %s: message %d, where the copy %s ends, is gone (%v); move the copy aside to start a new one",
			AuditStream, pos.StreamSeq, m.Path, shown(err))
	}
	last, err := lastLine(m.Path, pos.Size)
	if err != nil {
		return err
	}
	if raw.Subject != m.Subject || !bytes.Equal(raw.Data, last) {
		return fmt.Errorf("nats stream %s: message %d is not the copy's last line: the stream holds another log than %s; "+
			"move the copy aside to start a new one", AuditStream, pos.StreamSeq, m.Path)
	}
	return nil
}

func (m *AuditMirror) readPos() (mirrorPos, bool) {
	b, err := os.ReadFile(m.PosPath())
	if err != nil {
		return mirrorPos{}, false
	}
	var p mirrorPos
	if json.Unmarshal(b, &p) != nil {
		return mirrorPos{}, false
	}
	return p, true
}

// lastLine is the line that ends at end (without its newline), read
// backwards a chunk at a time (an entry has no size limit here).
func lastLine(path string, end int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	const chunk = 64 << 10
	var line []byte
	stop := end - 1 // the newline that ends it
	for pos := stop; pos > 0; {
		from := max(pos-chunk, 0)
		b := make([]byte, pos-from)
		if _, err := f.ReadAt(b, from); err != nil && err != io.EOF {
			return nil, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return append(b[i+1:], line...), nil
		}
		line = append(b, line...)
		pos = from
	}
	return line, nil
}

// writeHead anchors the copy's end as a log's head does (audit.HeadPath):
// without one, a copy of more than one entry does not verify.
func writeHead(logPath string, last []byte, size int64) error {
	var e audit.Entry
	if err := json.Unmarshal(last, &e); err != nil {
		return fmt.Errorf("audit copy %s: last line: %w", logPath, err)
	}
	head, _ := json.Marshal(map[string]any{"seq": e.Seq, "hash": e.Hash, "size": size})
	return atomicfile.Write(audit.HeadPath(logPath), head, 0o600)
}
