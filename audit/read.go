package audit

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
)

// Line is an entry read from the file, with where it sits so a viewer can
// come back to it. Err is set for a line that is not a valid entry.
type Line struct {
	Offset int64
	Entry  Entry
	Err    error
}

// ReadTail returns the last n lines of the log (oldest first) without reading
// the rest of the file, and the offset where they start: a viewer's first frame
// on a huge log costs only what it shows.
func ReadTail(path string, n int) ([]Line, int64, error) {
	if n <= 0 {
		return nil, 0, nil
	}
	f, err := open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	end := st.Size()
	start := end
	const chunk = 256 << 10
	buf := make([]byte, 0, chunk)
	found := 0
	for start > 0 && found <= n {
		step := int64(chunk)
		if start < step {
			step = start
		}
		start -= step
		part := make([]byte, step)
		if _, err := f.ReadAt(part, start); err != nil && err != io.EOF {
			return nil, 0, err
		}
		buf = append(part, buf...)
		found = bytes.Count(buf, []byte("\n"))
	}
	// drop a partial first line unless we reached the file's start
	if start > 0 {
		i := bytes.IndexByte(buf, '\n')
		start += int64(i + 1)
		buf = buf[i+1:]
	}
	lines := splitLines(buf, start)
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) > 0 {
		start = lines[0].Offset
	}
	return lines, start, nil
}

// ReadRange returns the complete lines in [from, to) of the file; to < 0 means
// the end. It returns the offset just after the last complete line, where the
// next read should begin (a half-written line is left for later).
func ReadRange(path string, from, to int64) ([]Line, int64, error) {
	f, err := open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, from, nil
	}
	if err != nil {
		return nil, from, err
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, from, err
	}
	var r io.Reader = f
	if to >= 0 {
		r = io.LimitReader(f, to-from)
	}
	data, err := io.ReadAll(bufio.NewReader(r))
	if err != nil {
		return nil, from, err
	}
	cut := bytes.LastIndexByte(data, '\n')
	if cut < 0 {
		return nil, from, nil
	}
	return splitLines(data[:cut+1], from), from + int64(cut+1), nil
}

// Scan calls fn for every complete line from offset from on, streaming.
func Scan(path string, from int64, fn func(Line) bool) (int64, error) {
	f, err := open(path)
	if errors.Is(err, os.ErrNotExist) {
		return from, nil
	}
	if err != nil {
		return from, err
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return from, err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	off := from
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			e, perr := parseLineFast(line[:len(line)-1])
			if !fn(Line{Offset: off, Entry: e, Err: perr}) {
				return off + int64(len(line)), nil
			}
			off += int64(len(line))
		}
		if err == io.EOF {
			return off, nil
		}
		if err != nil {
			return off, err
		}
	}
}

func splitLines(buf []byte, base int64) []Line {
	var out []Line
	off := base
	for len(buf) > 0 {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		e, err := parseLineFast(buf[:i])
		out = append(out, Line{Offset: off, Entry: e, Err: err})
		off += int64(i + 1)
		buf = buf[i+1:]
	}
	return out
}

// EndOfCompleteLines is the offset just after the log's last newline: an
// entry appended from now on starts at or after it (a torn tail beyond it is
// cut before the next append). A missing file gives 0.
func EndOfCompleteLines(path string) (int64, error) {
	fh, err := open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return 0, err
	}
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	for end := st.Size(); end > 0; {
		start := max(end-chunk, 0)
		m, err := fh.ReadAt(buf[:end-start], start)
		if err != nil && err != io.EOF {
			return 0, err
		}
		for i := m - 1; i >= 0; i-- {
			if buf[i] == '\n' {
				return start + int64(i) + 1, nil
			}
		}
		end = start
	}
	return 0, nil
}
