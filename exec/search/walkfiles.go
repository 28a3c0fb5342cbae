package search

import "strings"

// walkFile is one file rg reported.
type walkFile struct {
	orderRel string // raw path relative to the order root
	display  string // path.text
	recs     fileRecs
	ended    bool // rg's "end" message arrived: the file is complete
	events   []Event
	err      *FileError
	isDir    bool // an error entry for a directory
	again    bool // starts with a byte-order mark, or see wholeLastLine: search again
	keep     bool // text: its events are built from recs once in order
}

// eventsAtLeast is how many events the file gives: exactly that without
// context lines.
func (f *walkFile) eventsAtLeast() int {
	if f.keep {
		return len(f.recs.lines)
	}
	return len(f.events)
}

// recStore packs the records of every file rg reports into a few shared
// slabs instead of one growing arena per file: a dense search reports
// thousands of files, and per-file doubling allocated about twice the
// records' size in fresh memory, which the kernel must fault in and zero
// (page faults were a fifth of Vigil's CPU time on the Go tree). rg prints
// each file's messages together, so the file being read owns the slabs'
// tails; its records stay contiguous, and once another file takes over its
// fileRecs become subslices of the slabs, with capacity capped so that
// nothing can append into a neighbour's records.
type recStore struct {
	text       []byte
	lines      []recLine
	spans      []span
	owner      *walkFile
	t0, l0, s0 int // where owner's records start in the slabs
}

// Slabs grow geometrically up to these sizes, so that a selective search
// allocates little and a dense one a slab per megabyte or so.
const (
	slabText  = 1 << 20
	slabLines = 1 << 14
	slabSpans = 1 << 15
)

// inOrder is fileRecs.inOrder for f's records, wherever they are.
func (st *recStore) inOrder(f *walkFile, line uint64) bool {
	if st.owner != f {
		return f.recs.inOrder(line)
	}
	return len(st.lines) == st.l0 || st.lines[len(st.lines)-1].line <= line
}

// add is fileRecs.add for f; it reports whether a new line was kept and
// how many spans were.
func (st *recStore) add(f *walkFile, rec record, maxPerFile int) (newLine bool, spans int) {
	if st.owner != f {
		st.take(f)
	}
	if len(st.lines) > st.l0 && st.lines[len(st.lines)-1].line == rec.line {
		l := &st.lines[len(st.lines)-1]
		keep := capSpans(rec.spans, l.span1-l.span0)
		st.reserve(0, 0, len(keep))
		l = &st.lines[len(st.lines)-1] // (reserve may have moved the lines)
		st.spans = append(st.spans, keep...)
		l.span1 = len(st.spans) - st.s0
		return false, len(keep)
	}
	if maxPerFile > 0 && len(st.lines)-st.l0 >= maxPerFile {
		return false, 0
	}
	keep := capSpans(rec.spans, 0)
	st.reserve(len(rec.text), 1, len(keep))
	l := recLine{line: rec.line, text0: len(st.text) - st.t0, span0: len(st.spans) - st.s0}
	st.text = append(st.text, rec.text...)
	st.spans = append(st.spans, keep...)
	l.text1, l.span1 = len(st.text)-st.t0, len(st.spans)-st.s0
	st.lines = append(st.lines, l)
	return true, len(keep)
}

// take makes f the owner of the slabs' tails. A file reported again after
// another (rg does not do that) has its records moved to the tails.
func (st *recStore) take(f *walkFile) {
	st.seal()
	old := f.recs
	st.reserve(len(old.text), len(old.lines), len(old.spans))
	st.t0, st.l0, st.s0 = len(st.text), len(st.lines), len(st.spans)
	st.text = append(st.text, old.text...)
	st.lines = append(st.lines, old.lines...)
	st.spans = append(st.spans, old.spans...)
	st.owner = f
}

// seal hands the owner its records as capped subslices of the slabs.
func (st *recStore) seal() {
	if f := st.owner; f != nil {
		f.recs = fileRecs{
			lines: st.lines[st.l0:len(st.lines):len(st.lines)],
			text:  st.text[st.t0:len(st.text):len(st.text)],
			spans: st.spans[st.s0:len(st.spans):len(st.spans)],
		}
		st.owner = nil
	}
}

// reserve makes room at the tails for nt more bytes of text, nl more
// lines and ns more spans. A full slab is left to the files sealed in it;
// the owner's records so far move to the new one (every offset in them is
// relative to the file, so they stay valid).
func (st *recStore) reserve(nt, nl, ns int) {
	st.text, st.t0 = grownSlab(st.text, st.t0, nt, slabText)
	st.lines, st.l0 = grownSlab(st.lines, st.l0, nl, slabLines)
	st.spans, st.s0 = grownSlab(st.spans, st.s0, ns, slabSpans)
}

// grownSlab returns slab, or a new one holding slab[from:], with room for n
// more elements; and where those elements now start.
func grownSlab[T any](slab []T, from, n, most int) ([]T, int) {
	if cap(slab)-len(slab) >= n {
		return slab, from
	}
	part := slab[from:]
	size := max(min(2*cap(slab), most), 2*(len(part)+n), 64)
	return append(make([]T, 0, size), part...), 0
}

// newWalkFile is a file the walk found, by its raw path relative to the
// order root.
func newWalkFile(orderRel string) *walkFile {
	return &walkFile{orderRel: orderRel, display: displayPath(orderRel)}
}

// displayPath is path.text for a raw path relative to the order root: each
// component as the walker keys it.
func displayPath(rel string) string {
	if k := sortKey(rel); k == rel {
		return rel // valid NFC throughout: each component is its own key
	}
	parts := strings.Split(rel, "/")
	for i, s := range parts {
		parts[i] = sortKey(s)
	}
	return strings.Join(parts, "/")
}
