package audit

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/vigil-dev/vigil/internal/fswatch"
)

// Follower reads what is appended to a log, from an offset on. It is the one
// way Vigil follows a log (metrics, the shared queue's copy, `audit tail
// --follow`, the screens, the approval queue's change feed): each caller
// asks for what is new (Read) when Watch wakes it, and decides for itself
// what a cut means to it.
//
// The one rule for a cut: the file at the path is not the file read before,
// or it is shorter than what was read, or the last line read no longer ends
// at the offset with the same bytes. A cut batch starts over at offset 0 of
// the log as it now is. A rewrite further back than the last line is not a
// cut to a follower; the chain's verification finds it.
type Follower struct {
	path     string
	off      int64
	file     os.FileInfo // the file read last; nil before the first read
	last     []byte      // the tail of the last line read, '\n' included
	needLast bool        // off was set from outside: take last as found
	// MaxBatch bounds one Read's data (a line longer than it is still
	// returned whole); 0 means 4 MiB.
	MaxBatch int
}

// lastKept is how much of the last line is compared: an entry ends with its
// hash, so the tail of a line changes whenever the line does.
const lastKept = 256

// Batch is what one Read found.
type Batch struct {
	// Cut: the log is not the one read before (see Follower); From is 0.
	Cut bool
	// From and End are the offsets of Data's first byte and just past its
	// last: Data holds only complete lines, each ending in '\n'.
	From, End int64
	Data      []byte
	// More: complete lines past End were left for the next Read (MaxBatch).
	More bool
}

// Lines parses the batch's lines (offsets are the log's).
func (b Batch) Lines() []Line { return splitLines(b.Data, b.From) }

// Empty is a batch with no line and no cut.
func (b Batch) Empty() bool { return !b.Cut && len(b.Data) == 0 }

// NewFollower follows the log at path from offset from, which must be the
// start of a line (0, or an offset a caller kept: the first Read reports a
// cut if from is past the end or not just after a newline).
func NewFollower(path string, from int64) *Follower {
	return &Follower{path: path, off: from, needLast: from > 0}
}

// Path is the log followed.
func (f *Follower) Path() string { return f.path }

// Offset is where the next Read starts.
func (f *Follower) Offset() int64 { return f.off }

// Rewind makes the next Read start at off (the start of a line a caller could
// not finish with, such as a publish that failed). The line before off is
// taken as it is then found.
func (f *Follower) Rewind(off int64) {
	f.off, f.last, f.needLast = off, nil, off > 0
}

// Read returns the complete lines appended since the last Read. A missing
// log is empty (a cut if something had been read).
func (f *Follower) Read() (Batch, error) {
	fh, err := open(f.path)
	if errors.Is(err, os.ErrNotExist) {
		if f.off > 0 || f.file != nil {
			f.restart(nil)
			return Batch{Cut: true}, nil
		}
		return Batch{}, nil
	}
	if err != nil {
		return Batch{From: f.off, End: f.off}, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return Batch{From: f.off, End: f.off}, err
	}
	var b Batch
	cut, err := f.isCut(fh, fi)
	if err != nil {
		return Batch{From: f.off, End: f.off}, err
	}
	if cut {
		f.restart(fi)
		b.Cut = true
	}
	f.file = fi
	return f.readFrom(fh, fi.Size(), b)
}

func (f *Follower) restart(fi os.FileInfo) {
	f.off, f.last, f.needLast, f.file = 0, nil, false, fi
}

// isCut applies the one rule (see Follower).
func (f *Follower) isCut(fh *os.File, fi os.FileInfo) (bool, error) {
	if f.file != nil && !os.SameFile(f.file, fi) {
		return true, nil
	}
	if fi.Size() < f.off {
		return true, nil
	}
	if f.off == 0 {
		return false, nil
	}
	if f.needLast {
		tail, err := lineTailBefore(fh, f.off)
		if err != nil {
			return false, err
		}
		if tail == nil {
			return true, nil // the offset is not just after a newline
		}
		f.last, f.needLast = tail, false
		return false, nil
	}
	if len(f.last) == 0 {
		return false, nil
	}
	got := make([]byte, len(f.last))
	if _, err := fh.ReadAt(got, f.off-int64(len(got))); err != nil && err != io.EOF {
		return false, err
	}
	return !bytes.Equal(got, f.last), nil
}

// lineTailBefore reads the tail of the line that ends at off, or nil when
// the byte before off is not a newline.
func lineTailBefore(fh *os.File, off int64) ([]byte, error) {
	n := min(int64(lastKept), off)
	buf := make([]byte, n)
	if _, err := fh.ReadAt(buf, off-n); err != nil && err != io.EOF {
		return nil, err
	}
	if buf[len(buf)-1] != '\n' {
		return nil, nil
	}
	return lastLineTail(buf), nil
}

// lastLineTail is the end of the last line in b (which ends in '\n'): from
// the line's start, or its last lastKept bytes.
func lastLineTail(b []byte) []byte {
	start := bytes.LastIndexByte(b[:len(b)-1], '\n') + 1
	return b[max(start, len(b)-lastKept):]
}

// readFrom reads complete lines from f.off on, at most MaxBatch bytes of
// them unless one line is longer.
func (f *Follower) readFrom(fh *os.File, size int64, b Batch) (Batch, error) {
	b.From, b.End = f.off, f.off
	avail := size - f.off
	if avail <= 0 {
		return b, nil
	}
	limit := int64(f.MaxBatch)
	if limit <= 0 {
		limit = 4 << 20
	}
	want := min(avail, limit)
	for {
		buf := make([]byte, want)
		n, err := fh.ReadAt(buf, f.off)
		if err != nil && err != io.EOF {
			return b, err
		}
		buf = buf[:n]
		cut := bytes.LastIndexByte(buf, '\n')
		if want > limit {
			cut = bytes.IndexByte(buf, '\n') // a window grown for one long line returns that line
		}
		if cut < 0 {
			if want < avail {
				want = min(avail, want*2) // one line longer than the batch
				continue
			}
			return b, nil // only a line being written
		}
		b.Data = buf[:cut+1]
		b.End = f.off + int64(len(b.Data))
		// complete lines were left in the window, or bytes past it were not looked at
		b.More = bytes.IndexByte(buf[cut+1:], '\n') >= 0 || want < avail
		f.off = b.End
		f.last = bytes.Clone(lastLineTail(b.Data))
		return b, nil
	}
}

// Watch wakes a follower of the log at path: it signals changes to the log
// and to its head (a seal). Missed events are possible only as fsnotify
// overflows, which it also signals.
func Watch(path string) (*fswatch.Watcher, error) {
	return fswatch.Watch(filepath.Dir(path), filepath.Base(path), filepath.Base(HeadPath(path)))
}
