package search

import (
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
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

// walkResponse builds the response from the files the walk kept, sorted
// into the walker's order. Events are built in final order straight into
// matches[]: no per-file slices to copy again. ok is false when context
// lines would truncate the result (the ordered path decides where); on a
// timeout it is truncated here.
func (p *prepared) walkResponse(pattern string, files []*walkFile, scanned int64, timedOut bool) (resp Response, ok bool) {
	slices.SortFunc(files, cmpWalkFiles)
	resp = Response{Pattern: pattern, Path: p.pl.target, Errors: []FileError{}, FilesScanned: scanned, TimedOut: timedOut}
	size := 0
	for _, f := range files {
		size += f.eventsAtLeast()
	}
	var anyMatch bool
	if p.e.context == 0 && size <= p.e.maxResults {
		resp.Matches, resp.Errors, anyMatch = fillWalkEvents(files, size, resp.Errors)
	} else {
		resp.Matches = make([]Event, 0, min(size, p.e.maxResults+1))
		if anyMatch, ok = p.appendWalkFiles(&resp, files, timedOut); !ok {
			return Response{}, false
		}
	}
	resp.Count = len(resp.Matches)
	code := 1
	if anyMatch {
		code = 0
	}
	resp.ExitCode = &code
	resp.Content = content(&resp, p.e)
	return resp, true
}

// fillWalkEvents builds the events of files that need no context lines
// and fit max_results: every kept line is one event, so each file's place
// in matches[] is known and all cores fill it at once. It returns the
// events, errs with the files' errors appended, and whether any event is a
// match.
func fillWalkEvents(files []*walkFile, size int, errs []FileError) ([]Event, []FileError, bool) {
	if size >= bigMatches {
		// A collection that starts right after this allocation (which
		// is likely to be what crosses the heap goal) reads its pages
		// before the events are written: they map to the shared zero
		// page, and each first write then takes a copy-on-write fault
		// with a TLB shootdown across CPUs, costly in VMs (21 ms CPU
		// for 138k events on the Go tree). Collecting first leaves the
		// goal far enough away, and costs ~4 ms here.
		runtime.GC()
	}
	matches := make([]Event, size)
	var wg sync.WaitGroup
	next := 0
	const perTask = 256 // files per goroutine
	for from := 0; from < len(files); from += perTask {
		group, at := files[from:min(from+perTask, len(files))], next
		for _, f := range group {
			next += f.eventsAtLeast()
		}
		wg.Go(func() {
			for _, f := range group {
				if f.keep {
					at += len(appendWalkEvents(matches[at:at:at+len(f.recs.lines)], f.display, &f.recs))
				} else {
					at += copy(matches[at:], f.events)
				}
			}
		})
	}
	wg.Wait()
	anyMatch := false
	for _, f := range files {
		if f.err != nil {
			errs = append(errs, *f.err)
		}
		anyMatch = anyMatch || f.keep
	}
	for i := range matches {
		if anyMatch {
			break
		}
		anyMatch = matches[i].Type == "match"
	}
	return matches, errs, anyMatch
}

// appendWalkFiles appends the files' events, with context lines, to
// resp.Matches in order, and their errors to resp.Errors, and reports
// whether any event is a match. Past max_results it reports !ok, unless
// the search timed out: then the result is cut there and truncated.
func (p *prepared) appendWalkFiles(resp *Response, files []*walkFile, timedOut bool) (anyMatch, ok bool) {
	for _, f := range files {
		if f.keep {
			n := len(resp.Matches)
			var why string
			it := item{abs: filepath.Join(p.pl.orderRoot, f.orderRel), rel: f.display}
			// A file that grew past max_file_size_bytes since its sniff is
			// skipped and counted, as on the ordered path.
			if resp.Matches, why = p.appendFileEventsWhy(resp.Matches, it, &f.recs); why != "" && why != whyTooLarge {
				f.err = &FileError{Path: f.display, Error: why}
			}
			anyMatch = anyMatch || len(resp.Matches) > n
		} else {
			resp.Matches = append(resp.Matches, f.events...)
			for i := range f.events {
				anyMatch = anyMatch || f.events[i].Type == "match"
			}
		}
		if f.err != nil {
			resp.Errors = append(resp.Errors, *f.err)
		}
		if len(resp.Matches) > p.e.maxResults {
			if !timedOut {
				return false, false
			}
			resp.Matches = resp.Matches[:p.e.maxResults]
			resp.Truncated = true
			break
		}
	}
	return anyMatch, true
}
