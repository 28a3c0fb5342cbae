package search

import (
	"strings"
	"unsafe"
)

// cmpWalkFiles orders by path.text, which for plain paths (path.text equal
// to the raw path, so no two share a key) is the walker's order; others go
// through cmpWalkOrder.
func cmpWalkFiles(a, b *walkFile) int {
	if !a.isDir && !b.isDir && a.display == a.orderRel && b.display == b.orderRel {
		return strings.Compare(a.orderRel, b.orderRel)
	}
	return cmpWalkOrder(a.orderRel, a.isDir, b.orderRel, b.isDir)
}

// cmpWalkOrder orders raw relative paths as the walker visits them: at the
// first differing component, as cmpChild orders siblings (every component
// but the last is a directory).
func cmpWalkOrder(a string, aDir bool, b string, bDir bool) int {
	if !aDir && !bDir && isASCII(a) && isASCII(b) {
		return strings.Compare(a, b) // ASCII names are their own keys
	}
	pa, pb := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if pa[i] == pb[i] {
			continue
		}
		ca := child{name: pa[i], key: sortKey(pa[i]), isDir: i < len(pa)-1 || aDir}
		cb := child{name: pb[i], key: sortKey(pb[i]), isDir: i < len(pb)-1 || bDir}
		return cmpChild(ca, cb)
	}
	return len(pa) - len(pb)
}

// bigMatches is how many events (about 4 MB of them) make a collection
// before allocating matches[] worth its cost.
const bigMatches = 40_000

// appendWalkEvents is appendFileEventsWhy without context lines, over
// records in the shared slabs (see recStore), and allocates nothing but
// what lossy needs for text that is not UTF-8: Line and Submatches alias
// the slabs, which are never written again where sealed records lie (and
// there is no per-file copy of the spans or path join to pay for).
func appendWalkEvents(out []Event, rel string, f *fileRecs) []Event {
	all := unsafe.String(unsafe.SliceData(f.text), len(f.text))
	spans := unsafe.Slice((*Span)(unsafe.Pointer(unsafe.SliceData(f.spans))), len(f.spans))
	for _, r := range f.lines {
		out = append(out, matchEvent(rel, r.line, all[r.text0:r.text1], spans[r.span0:r.span1:r.span1], r.cut))
	}
	return out
}

// Span and span have the same layout, so the spans slab can serve as
// Submatches without a copy (these fail to compile otherwise).
var (
	_ [unsafe.Sizeof(Span{}) - unsafe.Sizeof(span{})]byte
	_ [unsafe.Sizeof(span{}) - unsafe.Sizeof(Span{})]byte
	_ [unsafe.Offsetof(Span{}.End) - unsafe.Offsetof(span{}.end)]byte
	_ [unsafe.Offsetof(span{}.end) - unsafe.Offsetof(Span{}.End)]byte
)
