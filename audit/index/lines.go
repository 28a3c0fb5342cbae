package auditpane

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
)

// The pane keeps where each line starts, not parsed rows: a million-entry
// log costs 8 MB of offsets, and only the lines on screen are ever parsed.

// indexed is the result of a scan for line starts.
type indexed struct {
	offs   []int64 // where each complete line starts, ascending
	end    int64   // just after the last complete line
	info   os.FileInfo
	events []string // event names not seen before, in order of appearance
	raw    []byte   // the bytes [from, end), kept for a small log
	err    error
}

// inMemoryLog is the size up to which the pane keeps the log's bytes: rows
// and filters are then computed at once, on the UI goroutine, without I/O.
// (A variable: tests take the large logs' path with small ones.)
var inMemoryLog int64 = 2 << 20

// maxEvents bounds the event names kept for the event filter's cycle (a
// hostile log could hold a million different ones).
const maxEvents = 256

// scanIndex finds the starts of the complete lines of the log from offset
// from on (from is a line start), reading only bytes: no line is parsed.
// seen holds the event names already known (read only). progress, when set,
// is told how far the scan is after every chunk.
// The bytes read are kept when the file is at most rawLimit bytes (see inMemoryLog).
func scanIndex(ctx context.Context, path string, from int64, seen map[string]bool, progress func(done, total int64), rawLimit int64) indexed {
	out := indexed{end: from}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return out
	}
	if err != nil {
		out.err = err
		return out
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		out.err = err
		return out
	}
	out.info = st
	if st.Size() < from {
		out.err = errShrunk
		return out
	}
	keepRaw := st.Size() <= rawLimit
	known := make(map[string]bool, len(seen))
	for e := range seen {
		known[e] = true
	}
	buf := make([]byte, passChunk)
	pos, start := from, from // pos: where the next read begins; start: the current line's start
	for {
		if ctx.Err() != nil {
			out.err = ctx.Err()
			return out
		}
		n, err := f.ReadAt(buf, pos)
		chunk := buf[:n]
		for i := 0; i < len(chunk); {
			nl := bytes.IndexByte(chunk[i:], '\n')
			if nl < 0 {
				break
			}
			out.offs = append(out.offs, start)
			if start >= pos && len(known) < maxEvents {
				// a line wholly in this chunk: note its event name
				noteEvent(chunk[start-pos:i+nl], known, &out.events)
			}
			i += nl + 1
			start = pos + int64(i)
		}
		if keepRaw {
			out.raw = append(out.raw, chunk...)
		}
		pos += int64(n)
		out.end = start
		if progress != nil {
			progress(pos, st.Size())
		}
		if err == io.EOF || n == 0 {
			if keepRaw {
				out.raw = out.raw[:out.end-from] // complete lines only
			}
			return out
		}
		if err != nil {
			out.err = err
			return out
		}
	}
}

var errShrunk = errors.New("the log is shorter than what was read")

// noteEvent records the event name of a line in canonical shape, if new.
// It walks the line as readHead does, but only up to the event: the index
// pays a few byte searches a line, not a parse.
func noteEvent(line []byte, known map[string]bool, events *[]string) {
	c := cursor{b: line, ok: true}
	c.lit(kSeq)
	c.digits()
	c.lit(kTime)
	c.str()
	c.lit(kActor)
	c.str()
	c.lit(kEvent)
	ev := c.str()
	if !c.ok || known[string(ev)] {
		return
	}
	name := string(ev)
	known[name] = true
	*events = append(*events, name)
}
