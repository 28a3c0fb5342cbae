package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/vigil-dev/vigil/internal/atomicfile"
	"github.com/vigil-dev/vigil/internal/flock"
)

// Log appends to one audit.log. It is safe across goroutines and processes:
// every append takes an exclusive flock, reads the chain's tail from the file
// itself, writes one line with O_APPEND and fsyncs before returning.
type Log struct {
	path string
	now  func() time.Time

	// KeyFile is the operator's Ed25519 key (PKCS#8 PEM) that signs the
	// checkpoints Append writes; by default keys/operator.key.pem beside the
	// log, where `vigil keys init` puts it. No key there: no checkpoints.
	KeyFile string
	// Warn hears what went wrong after an entry was already durable (a
	// checkpoint that could not be written). Nil drops it.
	Warn func(error)
}

// Open prepares the log at path. A torn last line (a crash mid-write) is moved
// aside to audit.log.torn-<time> and recorded as an entry of its own, so it is
// never built upon and never silently dropped. On a damaged log (see
// DamagedError) that record is refused: Open returns the error and the Log
// anyway, so that Seal can be called.
func Open(path string, now func() time.Time) (*Log, error) {
	l := &Log{path: path, now: now, KeyFile: filepath.Join(filepath.Dir(path), "keys", "operator.key.pem")}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := l.repairTorn(); err != nil {
		var de *DamagedError
		if errors.As(err, &de) {
			return l, err // the log, for Seal: its torn tail is aside, its record refused
		}
		return nil, err
	}
	return l, nil
}

// Path is the log file's path.
func (l *Log) Path() string { return l.path }

// HeadPath is where the anchor of the chain's end lives.
func HeadPath(logPath string) string { return logPath + ".head" }

func (l *Log) lock() (func(), error) { return flock.Lock(l.path + ".lock") }

// lockShared holds appenders off while a reader looks at the tail. It returns
// nil when there is no lock file (no Vigil process has appended yet) or the
// lock cannot be taken; the caller then reads without it.
func lockShared(path string) func() { return flock.Shared(path + ".lock") }

// Append seals e (seq, time, prev, hash) onto the chain and makes it durable.
// The caller fills actor, event and the rest; they must already be masked.
//
// Append refuses to grow a log whose end is not the one its head recorded
// (entries cut, replaced or edited): it writes nothing and returns a
// *DamagedError. After an approved or denied entry (and every
// CheckpointEvery entries) it also writes a signed checkpoint to
// audit.checkpoints when the operator key is there; a failure there never
// fails the append (the entry is already durable), it goes to Warn.
func (l *Log) Append(e Entry) (Entry, error) {
	details, err := canonicalDetails(e.Details)
	if err != nil {
		return Entry{}, err
	}
	e.Details = details
	lk, err := l.lock()
	if err != nil {
		return Entry{}, fmt.Errorf("audit: lock: %w", err)
	}
	defer lk()
	if err := l.repairTornLocked(); err != nil {
		return Entry{}, err
	}
	last, ok, err := l.checkTail()
	if err != nil {
		return Entry{}, err
	}
	out, err := l.appendAfter(e, last, ok)
	if err != nil {
		return Entry{}, err
	}
	l.maybeCheckpoint(out)
	return out, nil
}

// CheckEnd reports whether the next Append would be refused, writing no
// entry (a torn tail is repaired as Append would). A caller about to make a
// decision durable checks first, so no decision reaches its record while the
// log cannot take the entry that must follow it: decisions fail closed on a
// damaged log. The error is a *DamagedError when the end was cut or altered.
func (l *Log) CheckEnd() error {
	lk, err := l.lock()
	if err != nil {
		return fmt.Errorf("audit: lock: %w", err)
	}
	defer lk()
	if err := l.repairTornLocked(); err != nil {
		return err
	}
	_, _, err = l.checkTail()
	return err
}

// appendLocked appends after a tail that passed checkTail.
func (l *Log) appendLocked(e Entry) (Entry, error) {
	last, ok, err := l.checkTail()
	if err != nil {
		return Entry{}, err
	}
	return l.appendAfter(e, last, ok)
}

// appendAfter writes e after last (ok false: e is the first entry), then
// moves the head. The caller holds the lock and has checked last.
func (l *Log) appendAfter(e Entry, last Entry, ok bool) (Entry, error) {
	var err error
	e.Seq, e.Prev = 0, Genesis
	if ok {
		e.Seq, e.Prev = last.Seq+1, last.Hash
	}
	e.Time = l.now().UTC().Format(time.RFC3339)
	e = e.validUTF8()
	if len(e.Details) == 0 {
		e.Details = json.RawMessage("{}")
	}
	e.Hash, err = e.ComputeHash()
	if err != nil {
		return Entry{}, err
	}
	line, err := e.Line()
	if err != nil {
		return Entry{}, err
	}
	f, err := openFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return Entry{}, err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return Entry{}, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return Entry{}, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return Entry{}, err
	}
	if err := f.Close(); err != nil {
		return Entry{}, err
	}
	hb, _ := json.Marshal(head{Seq: e.Seq, Hash: e.Hash, Size: st.Size()})
	if err := writeHead(HeadPath(l.path), hb); err != nil {
		return Entry{}, fmt.Errorf("audit: head: %w", err)
	}
	return e, nil
}

// writeHead replaces the head atomically (temp file, rename) but without
// fsync: the entry itself is already durable, and Verify and checkTail accept
// a head that a crash left behind the log (or empty). Skipping the two fsyncs of a
// durable replace triples append throughput.
func writeHead(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func (l *Log) repairTorn() error {
	lk, err := l.lock()
	if err != nil {
		return err
	}
	defer lk()
	return l.repairTornLocked()
}

// repairTornLocked moves an unterminated tail aside and records it.
func (l *Log) repairTornLocked() error {
	f, err := openFile(l.path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	start, err := lastLineStart(f, st.Size())
	if err != nil {
		return err
	}
	tail := make([]byte, st.Size()-start)
	if _, err := f.ReadAt(tail, start); err != nil {
		return err
	}
	if bytes.HasSuffix(tail, []byte("\n")) {
		return nil
	}
	now := l.now().UTC()
	aside := fmt.Sprintf("%s.torn-%s", l.path, now.Format("20060102T150405.000000000Z"))
	// a fixed or coarse clock may repeat: never overwrite an earlier torn tail
	for i := 1; ; i++ {
		if _, err := os.Lstat(aside); errors.Is(err, os.ErrNotExist) {
			break
		}
		aside = fmt.Sprintf("%s.torn-%s-%d", l.path, now.Format("20060102T150405.000000000Z"), i)
	}
	if err := atomicfile.Write(aside, tail, 0o600); err != nil {
		return err
	}
	if err := f.Truncate(start); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	_, err = l.appendLocked(Entry{
		Actor: "vigil", Event: EventTorn,
		Details: Details(map[string]any{"moved_to": filepath.Base(aside), "bytes": len(tail)}),
	})
	return err
}

// lastLineStart returns the offset where the file's last line begins (the
// last line may lack its newline).
func lastLineStart(f *os.File, size int64) (int64, error) {
	const chunk = 64 << 10
	end := size
	if end > 0 {
		// skip the final newline so we look for the one before it
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, end-1); err != nil {
			return 0, err
		}
		if b[0] == '\n' {
			end--
		}
	}
	buf := make([]byte, chunk)
	for pos := end; pos > 0; {
		n := int64(chunk)
		if pos < n {
			n = pos
		}
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil && err != io.EOF {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return pos + int64(i) + 1, nil
		}
	}
	return 0, nil
}
