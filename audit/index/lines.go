package index

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
)

// A viewer keeps where each line starts, not parsed rows: a million-entry
// log costs 8 MB of offsets, and only the lines on screen are ever parsed.

// Scanned is the result of a scan for line starts.
type Scanned struct {
	Offs   []int64 // where each complete line starts, ascending
	From   int64   // where the scan began
	End    int64   // just after the last complete line
	More   bool    // Extend left complete lines past End for the next one
	Info   os.FileInfo
	Events []string // event names not seen before, in order of appearance
	Raw    []byte   // the bytes [from, End), kept for a small log
	Err    error
}

// MaxEvents bounds the event names kept for the event filter's cycle (a
// hostile log could hold a million different ones).
const MaxEvents = 256

// Scan finds the starts of the complete lines of the log from offset
// from on (from is a line start), reading only bytes: no line is parsed.
// seen holds the event names already known (read only). progress, when set,
// is told how far the scan is after every chunk.
// The bytes read are kept when the file is at most rawLimit bytes (a
// viewer then filters and draws a small log without I/O).
func Scan(ctx context.Context, path string, from int64, seen map[string]bool, progress func(done, total int64), rawLimit int64) Scanned {
	out := Scanned{From: from, End: from}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return out
	}
	if err != nil {
		out.Err = err
		return out
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		out.Err = err
		return out
	}
	out.Info = st
	if st.Size() < from {
		out.Err = ErrShrunk
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
			out.Err = ctx.Err()
			return out
		}
		n, err := f.ReadAt(buf, pos)
		chunk := buf[:n]
		for i := 0; i < len(chunk); {
			nl := bytes.IndexByte(chunk[i:], '\n')
			if nl < 0 {
				break
			}
			out.Offs = append(out.Offs, start)
			if start >= pos && len(known) < MaxEvents {
				// a line wholly in this chunk: note its event name
				noteEvent(chunk[start-pos:i+nl], known, &out.Events)
			}
			i += nl + 1
			start = pos + int64(i)
		}
		if keepRaw {
			out.Raw = append(out.Raw, chunk...)
		}
		pos += int64(n)
		out.End = start
		if progress != nil {
			progress(pos, st.Size())
		}
		if err == io.EOF || n == 0 {
			if keepRaw {
				out.Raw = out.Raw[:out.End-from] // complete lines only
			}
			return out
		}
		if err != nil {
			out.Err = err
			return out
		}
	}
}

// ErrShrunk is the error of a scan from an offset the log no longer reaches,
// or of Extend on a log cut or replaced since it was indexed: index it all
// again.
var ErrShrunk = errors.New("the log is shorter than what was read")

// Extend indexes the lines appended since c's last read (c stands at the end
// of what was indexed), from the bytes its follower read: ErrShrunk when the
// follower finds a cut. The bytes are kept (Raw) when the log is at most
// rawLimit bytes. More says complete lines are left for another Extend.
func Extend(c *Cursor, seen map[string]bool, rawLimit int64) Scanned {
	b, err := c.read()
	out := Scanned{From: b.From, End: b.End, More: b.More}
	switch {
	case err != nil:
		out.Err = err
		return out
	case b.Cut:
		out.End, out.Err = b.From, ErrShrunk
		return out
	}
	known := make(map[string]bool, len(seen))
	for e := range seen {
		known[e] = true
	}
	for data, start := b.Data, b.From; len(data) > 0; {
		nl := bytes.IndexByte(data, '\n')
		out.Offs = append(out.Offs, start)
		if len(known) < MaxEvents {
			noteEvent(data[:nl], known, &out.Events)
		}
		data, start = data[nl+1:], start+int64(nl)+1
	}
	if st, err := os.Stat(c.f.Path()); err == nil && st.Size() <= rawLimit {
		out.Raw = b.Data
	}
	return out
}

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
