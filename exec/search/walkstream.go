package search

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
)

// walkSpanCap is how many matches a walk holds before the ordered path
// answers instead. Lines are capped (max_results) and so are matches per
// line (maxSubmatches), but a walk holds the matches of files it will drop
// at the end (binary files, ugrep's in files Vigil does not search:
// ugwalk.go) until then. 1M matches is 16 MB of spans; the Go tree's
// search for "err" holds 181k.
const walkSpanCap = 1 << 20

// walkStream reads a walking backend's output into the files it reports.
// The backend prints each file's lines together, once the file is
// searched, so each file it moves on from is complete and goes to the
// finisher, to be read for its lines while the backend goes on.
type walkStream struct {
	p        *prepared
	ug       bool
	ugPlain  bool   // ugrep leaves "./" off paths under "."
	orderPre string // the order root, relative to the sandbox root
	fin      *walkFinisher

	files    []*walkFile
	index    map[string]*walkFile
	last     *walkFile
	lastPath []byte
	store    recStore
	pb       parseBuf
	pending  []byte

	lines, spans int   // matching lines and matches held, in all files
	searches     int64 // rg's count of files searched (--stats), -1 until read
	stats        bool  // rg's --stats block has begun
	malformed    bool  // output Vigil cannot read
	over         bool  // truncation is certain, or too many matches held
}

func (p *prepared) newWalkStream(fin *walkFinisher) *walkStream {
	ug := p.be.Name == "ugrep"
	return &walkStream{p: p, ug: ug, ugPlain: ug && p.walkRoot() == ".",
		orderPre: relSlash(p.pl.sandbox, p.pl.orderRoot), fin: fin,
		index: map[string]*walkFile{}, searches: -1}
}

// orderRel turns a path relative to the sandbox root into one relative to
// the order root.
func (s *walkStream) orderRel(sandboxRel string) string {
	if s.orderPre == "" {
		return sandboxRel
	}
	return strings.TrimPrefix(sandboxRel, s.orderPre+"/")
}

// read reads the backend's output to its end, cancelling the backend as
// soon as the ordered path must answer (over).
func (s *walkStream) read(ctx context.Context, r io.Reader, cancel func()) {
	br := bufio.NewReaderSize(r, 256<<10)
	for {
		line, rerr := br.ReadSlice('\n')
		if rerr == bufio.ErrBufferFull {
			s.pending = append(s.pending, line...)
			continue
		}
		if len(s.pending) > 0 {
			s.pending = append(s.pending, line...)
			line = s.pending
		}
		s.line(ctx, line)
		s.pending = s.pending[:0]
		if s.lines > s.p.e.maxResults || s.spans > walkSpanCap {
			// Truncation is certain (the ordered path stops early), or
			// the held records passed their cap (see walkSpanCap).
			s.over = true
			cancel()
		}
		if rerr != nil {
			break
		}
	}
}

// line reads one line of output, with its line end if it has one.
func (s *walkStream) line(ctx context.Context, line []byte) {
	complete := len(line) > 0 && line[len(line)-1] == '\n'
	line = bytes.TrimSuffix(line, []byte("\n"))
	switch {
	case !complete:
		// A line cut off by the kill at the deadline (or nothing).
		s.malformed = s.malformed || len(line) > 0 && ctx.Err() == nil
	case s.ug:
		// A name with a line end splits a record: malformed, and the
		// tally's newline hands over anyway.
		if rec, perr := parseUgrepLineBuf(line, &s.pb); perr != nil {
			s.malformed = true
		} else {
			s.add(rec)
		}
	case s.stats:
		if n, ok := parseRGFilesSearched(line); ok {
			s.searches = n
		}
	case len(line) == 0:
		s.stats = true
	default:
		rec, ok, perr := parseRGPlainMatch(line, &s.pb)
		switch {
		case perr != nil:
			s.malformed = true
		case ok:
			s.add(rec)
		default:
			s.malformed = true // with -a, rg prints no binary-file notices
		}
	}
}

// add keeps a record in its file's records.
func (s *walkStream) add(rec record) {
	f := s.fileOf(rec.path)
	if f == nil || f.ended || !s.store.inOrder(f, rec.line) {
		s.malformed = true
		return
	}
	newLine, kept := s.store.add(f, rec, s.p.e.maxPerFile)
	if newLine {
		s.lines++
	}
	s.spans += kept
}

// fileOf is the file a record's path names (nil for a path the backend
// cannot have printed); the file before it, if another, is complete.
func (s *walkStream) fileOf(path []byte) *walkFile {
	if s.last != nil && bytes.Equal(path, s.lastPath) {
		return s.last // the backend prints a file's lines together
	}
	if s.last != nil && !s.last.ended { // (a file seen again is malformed output)
		s.store.seal()
		s.last.ended = true
		s.fin.add(s.last)
	}
	f, ok := s.index[string(path)]
	if !ok {
		sandboxRel := path
		switch {
		case s.ugPlain && !bytes.HasPrefix(path, []byte("./")):
		case !s.ugPlain && bytes.HasPrefix(path, []byte("./")):
			sandboxRel = path[2:]
		default:
			return nil
		}
		f = newWalkFile(s.orderRel(string(sandboxRel)))
		s.index[string(path)] = f
		s.files = append(s.files, f)
	}
	s.last, s.lastPath = f, append(s.lastPath[:0], path...)
	return f
}

// end seals the records; the last file is complete too when the backend
// finished (it is not when the deadline cut the backend off).
func (s *walkStream) end(finished bool) {
	s.store.seal()
	if s.last != nil && !s.last.ended && finished {
		s.last.ended = true
		s.fin.add(s.last)
	}
}
