package search

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"
)

// The rg walk: for a request whose file selection rg can reproduce
// exactly, rg walks the tree itself, on all cores, instead of being handed
// Vigil's ordered file lists. Vigil's walk, the binary sniff of every file
// and rg's slower explicit-path mode cost 2-3x rg's own time on large
// trees; this path costs about rg's own time plus the final sort.
//
// Why the selection is the same: Vigil's walker follows rg 13's ignore
// rules (.gitignore, .ignore, .rgignore with rg's precedence, the .git
// boundary, whitelisted hidden names), rg is told to read nothing else
// (no global, exclude or parent ignore files, no git repository needed),
// and deny and exclude globs become rg override exclusions, which prune
// like Vigil's. Requests rg cannot reproduce take the ordered path:
// include globs (rg's whitelist overrides beat ignore files), followed
// symlinks (loop errors), exclude globs below the sandbox root, ignore
// files between the sandbox root and the search root, and any deny or
// exclude glob or ignore-file line with syntax beyond "*", "**" and "/"
// (rgSafeGlob; the walker flags such ignore files as it reads them). rg
// reports only files that matched, so the walker's list can only check
// that rg selected no file too many; these rules are what keep it from
// selecting one too few. A message on rg's stderr that Vigil cannot pin
// on a path hands over too.
//
// Output: rg prints only where each match is, and Vigil reads the matched
// files for their lines (rgplain.go says why and how).
//
// Binary files: every file rg matched is read and sniffed afterwards
// exactly as on the ordered path (NUL in the first 8 KiB: binary, dropped
// but counted; over max_file_size_bytes: dropped, counted), so rg's own
// NUL and encoding handling never decides. rg searches every file as text
// (-a), as it does on the ordered path, so a text file with a NUL past the
// sniff window gets the same answer from both. (-a also costs rg less than
// --binary, which turns NUL bytes into line ends: 92 against 105 ms of CPU
// on the selective case over the Go tree.)
//
// Order and truncation: output arrives in any order, so nothing is final
// until rg exits. As soon as more matching lines than max_results have
// arrived, truncation is certain, and the ordered path (which stops early)
// takes over; likewise when the final result would be truncated by context
// lines or when the walk reaches max_files (the ordered walk stops there).
// So the rg walk only ever returns complete, untruncated results, which are
// the same whichever path computes them (a timeout aside: then the matches
// read by the deadline are returned, sorted).

// rgWalkEligible reports whether rg can walk the tree for this request and
// select exactly the files Vigil's walker would.
func (p *prepared) rgWalkEligible() bool {
	// rgSafeGlob: rg may read other globs differently (and "!" would
	// whitelist).
	if p.be.Name != "rg" || !p.walkable(rgSafeGlob) {
		return false
	}
	if p.pl.target != p.pl.sandbox && !p.e.noIgnore {
		// Vigil applies ignore files from the sandbox root down; rg is told
		// to read none above its search root.
		rel := relSlash(p.pl.sandbox, p.pl.target)
		dir := p.pl.sandbox
		for _, part := range strings.Split(rel, "/") {
			for _, n := range ignoreNames {
				if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
					return false
				}
			}
			dir = filepath.Join(dir, part)
		}
	}
	return true
}

// walkable reports what both walks need: a directory searched without
// following links or include globs (rg's whitelist overrides beat ignore
// files; ugrep's would select differently), exclude globs only when the
// search root is the sandbox root (the walker reads them relative to the
// search root, the backend relative to its working directory, the
// sandbox root), no line end in the search root's path (the backend prints
// it in every path, and its lines cannot frame one), and every deny and
// exclude glob one the backend reads as the walker does (safe).
func (p *prepared) walkable(safe func(string) bool) bool {
	if p.pl.isFile || p.e.follow || len(p.e.include) > 0 {
		return false
	}
	if len(p.e.exclude) > 0 && p.pl.target != p.pl.sandbox {
		return false
	}
	if strings.IndexByte(relSlash(p.pl.sandbox, p.pl.target), '\n') >= 0 {
		return false
	}
	for _, g := range slices.Concat(p.denyGlobs, p.e.exclude) {
		if !safe(g) {
			return false
		}
	}
	for _, g := range p.denyGlobs {
		// The walker also denies a name whose NFC form a deny glob
		// matches; the backend matches the name as stored. Only these
		// ASCII characters are the NFC form of another character (U+212A
		// KELVIN SIGN, U+037E GREEK QUESTION MARK, U+1FEF GREEK VARIA), so
		// a glob of ASCII without them matches a name's NFC form only if
		// it matches the name.
		if strings.ContainsAny(g, "K;`") {
			return false
		}
	}
	return true
}

func (p *prepared) rgWalkArgs() []string {
	a := slices.Concat([]string{"--no-config", "-a", "-s"}, rgPlainArgs)
	if p.e.maxPerFile > 0 {
		a = append(a, "-m", strconv.Itoa(p.e.maxPerFile))
	}
	if p.fixed {
		a = append(a, "-F")
	}
	if p.e.word {
		a = append(a, "-w")
	}
	flags, root := p.rgWalkSelection()
	return append(append(a, flags...), "--regexp="+p.pat, "--", root)
}

// rgWalkSelection is the part of rg's arguments that selects files: rg
// with these flags and --files over root lists what the rg walk searches.
func (p *prepared) rgWalkSelection() (flags []string, root string) {
	a := []string{"--no-require-git", "--no-ignore-parent", "--no-ignore-global", "--no-ignore-exclude"}
	if p.e.hidden {
		a = append(a, "--hidden")
	}
	if p.e.noIgnore {
		a = append(a, "--no-ignore")
	}
	if !p.e.recursive {
		a = append(a, "--max-depth", "1")
	}
	for _, g := range p.denyGlobs {
		a = append(a, "-g", "!"+foldGlob(g, true)) // deny globs ignore case (compileDeny)
	}
	for _, g := range p.e.exclude {
		a = append(a, "-g", "!"+g)
	}
	return a, p.walkRoot()
}

// mayMatchNUL reports whether the pattern might match text that contains
// a NUL byte (sniffAfter says why that matters). Conservative: "." or a
// negated class will do.
func (p *prepared) mayMatchNUL() bool {
	if p.fixed {
		return strings.IndexByte(p.pat, 0) >= 0
	}
	if strings.IndexByte(p.pat, 0) >= 0 || strings.Contains(p.pat, ".") || strings.Contains(p.pat, "[^") ||
		strings.Contains(p.pat, "[:") || strings.Contains(p.pat, "(?") {
		return true
	}
	for _, esc := range []string{`\W`, `\D`, `\S`, `\x`, `\0`, `\u`, `\U`, `\p`, `\P`, `\C`, `\B`, `\H`, `\N`} {
		if strings.Contains(p.pat, esc) {
			return true
		}
	}
	return false
}

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

// cmpWalkFiles orders by path.text, which for plain paths (path.text equal
// to the raw path, so no two share a key) is the walker's order; others go
// through cmpWalkOrder.
func cmpWalkFiles(a, b *walkFile) int {
	if !a.isDir && !b.isDir && a.display == a.orderRel && b.display == b.orderRel {
		return strings.Compare(a.orderRel, b.orderRel)
	}
	return cmpWalkOrder(a.orderRel, a.isDir, b.orderRel, b.isDir)
}

// What a walk's backend may read for nothing, in files over
// max_file_size_bytes, before the ordered path answers instead (the
// ordered path never opens them): see hugewatch.go. ugrep also reads
// ignored files (its own, smaller budget: ugwalk.go).
const walkTooLargeBudget = 16 << 20

// walkWaste counts the bytes of files a walk's backend reads for nothing.
type walkWaste struct{ tooLarge, ignored int64 }

// tooLargeUnfit says why the ordered path must answer instead, given an
// item the walker selected: a file over max_file_size_bytes that takes
// what the backend reads for nothing past walkTooLargeBudget.
func tooLargeUnfit(it item, waste *walkWaste) string {
	if !it.skip {
		return ""
	}
	return wasted(&waste.tooLarge, it.size, walkTooLargeBudget)
}

// wasted adds a file of size bytes that the backend reads for nothing to
// *total, and says so once that passes budget.
func wasted(total *int64, size, budget int64) string {
	if *total += max(size, 0); *total > budget {
		return "files the backend would read for nothing, past the budget"
	}
	return ""
}

// walkSpanCap is how many matches a walk holds before the ordered path
// answers instead. Lines are capped (max_results) and so are matches per
// line (maxSubmatches), but a walk holds the matches of files it will drop
// at the end (binary files, ugrep's in files Vigil does not search:
// ugwalk.go) until then. 1M matches is 16 MB of spans; the Go tree's
// search for "err" holds 181k.
const walkSpanCap = 1 << 20

// bigMatches is how many events (about 4 MB of them) make a collection
// before allocating matches[] worth its cost.
const bigMatches = 40_000

// testHookRGWalkStarted runs once rg has started (tests cancel there).
var testHookRGWalkStarted = func() {}

// walkEligible reports whether the backend can walk the tree itself for
// this request: the rg walk, or the ugrep walk (ugwalk.go).
func (p *prepared) walkEligible() bool {
	return p.rgWalkEligible() || p.ugrepWalkEligible()
}

// runWalk runs the rg walk, or the ugrep walk with the ugrep backend.
// fallback means the ordered path must answer instead (nothing has been
// delivered). The backend rejecting the pattern ends it without a summary
// (rg) or with exit code 2 (ugrep), which falls back too: the ordered
// path's check then reports the pattern.
func (p *prepared) runWalk(parent context.Context, pattern string) (resp Response, fallback bool, err error) {
	ctx, cancel := context.WithTimeout(parent, time.Duration(p.e.timeoutMS)*time.Millisecond)
	defer cancel()
	ug := p.be.Name == "ugrep"
	var args []string
	if ug {
		args = p.ugrepWalkArgs()
	} else {
		args = p.rgWalkArgs()
	}
	cmd := command(ctx, p.be, p.pl.sandbox, p.env, args)
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	stdout, wait, err := startFollowed(cmd, p.e.maxSize)
	if err != nil {
		return resp, true, nil
	}
	testHookRGWalkStarted()
	// Files over the size cap: watched in the backend, or else learnt by
	// the walker (hugewatch.go).
	watch := p.watchHugeFiles(ctx, cmd.Process.Pid, cancel)
	defer func() { cancel(); watch.wait() }()
	tallied := make(chan walkTally, 1)
	go func() { tallied <- p.tallyWalk(ctx, cancel, watch == nil) }()

	orderPre := relSlash(p.pl.sandbox, p.pl.orderRoot)
	orderRel := func(sandboxRel string) string {
		if orderPre == "" {
			return sandboxRel
		}
		return strings.TrimPrefix(sandboxRel, orderPre+"/")
	}
	var (
		files     []*walkFile
		index     = map[string]*walkFile{}
		last      *walkFile
		lastPath  []byte
		lines     int
		spans     int   // matches held, in all files
		searches  int64 = -1
		malformed bool
		over      bool
		pb        parseBuf
		pending   []byte
		store     recStore
	)
	// Files are read for their lines as soon as rg is done with them,
	// while rg goes on with others.
	fin := p.startFinisher(ctx)
	defer fin.wait()
	ugPlain := ug && p.walkRoot() == "." // ugrep leaves "./" off paths under "."
	fileOf := func(path []byte) *walkFile {
		if last != nil && bytes.Equal(path, lastPath) {
			return last // rg prints a file's lines together
		}
		if last != nil && !last.ended { // (a file seen again is malformed output)
			store.seal()
			last.ended = true
			fin.add(last)
		}
		f, ok := index[string(path)]
		if !ok {
			sandboxRel := path
			switch {
			case ugPlain && !bytes.HasPrefix(path, []byte("./")):
			case !ugPlain && bytes.HasPrefix(path, []byte("./")):
				sandboxRel = path[2:]
			default:
				return nil
			}
			rel := orderRel(string(sandboxRel))
			f = &walkFile{orderRel: rel, display: displayPath(rel)}
			index[string(path)] = f
			files = append(files, f)
		}
		last, lastPath = f, append(lastPath[:0], path...)
		return f
	}
	add := func(rec record) {
		f := fileOf(rec.path)
		if f == nil || f.ended || !store.inOrder(f, rec.line) {
			malformed = true
			return
		}
		newLine, kept := store.add(f, rec, p.e.maxPerFile)
		if newLine {
			lines++
		}
		spans += kept
	}
	br := bufio.NewReaderSize(stdout, 256<<10)
	stats := false // rg's --stats block has begun
	for {
		line, rerr := br.ReadSlice('\n')
		if rerr == bufio.ErrBufferFull {
			pending = append(pending, line...)
			continue
		}
		if len(pending) > 0 {
			pending = append(pending, line...)
			line = pending
		}
		complete := len(line) > 0 && line[len(line)-1] == '\n'
		line = bytes.TrimSuffix(line, []byte("\n"))
		switch {
		case !complete:
			// A line cut off by the kill at the deadline (or nothing).
			malformed = malformed || len(line) > 0 && ctx.Err() == nil
		case ug:
			// A name with a line end splits a record: malformed, and the
			// tally's newline hands over anyway.
			if rec, perr := parseUgrepLineBuf(line, &pb); perr != nil {
				malformed = true
			} else {
				add(rec)
			}
		case stats:
			if n, ok := parseRGFilesSearched(line); ok {
				searches = n
			}
		case len(line) == 0:
			stats = true
		default:
			rec, ok, perr := parseRGPlainMatch(line, &pb)
			switch {
			case perr != nil:
				malformed = true
			case ok:
				add(rec)
			default:
				malformed = true // with -a, rg prints no binary-file notices
			}
		}
		pending = pending[:0]
		if lines > p.e.maxResults {
			over = true // truncation is certain: the ordered path stops early
			cancel()
		}
		if spans > walkSpanCap {
			over = true // held records past the cap: see walkSpanCap
			cancel()
		}
		if rerr != nil {
			break
		}
	}
	// The backend prints each file's lines together, once the file is
	// searched, so each file it moved on from is complete (fileOf), and all
	// are once it is done: rg's summary says so, ugrep's exit code (0 or
	// 1). The last one is not when the deadline cut the backend off.
	store.seal()
	werr := wait()
	finished := searches >= 0
	if code := exitCode(werr); ug {
		finished = ctx.Err() == nil && (code == 0 || code == 1)
	}
	if last != nil && !last.ended && finished {
		last.ended = true
		fin.add(last)
	}
	fin.wait()
	if !finished && exitCode(werr) == 2 {
		// The backend gave up by itself (a bad pattern, a glob rg's
		// globset rejects; with ugrep, any error): the tally is not
		// needed, and the ordered path's check reports the pattern,
		// deadline or not.
		cancel()
		<-tallied
		return resp, true, nil
	}
	tally := <-tallied
	if over || tally.over || tally.newline || !ug && tally.rgUnsafe || tally.unfit != "" || watch != nil && watch.found.Load() {
		return resp, true, nil
	}
	timedOut := parent.Err() == nil && ctx.Err() != nil
	if timedOut && !finished {
		// Killed before rg could say whether the pattern compiles: ask it
		// (a bad pattern is BadArgs, not an empty timed-out answer).
		if err := checkPattern(parent, p.be, p.e, p.pat, p.fixed, p.env); err != nil {
			return Response{}, false, err
		}
	}
	if (!finished || malformed || stderr.Len() >= stderrLimit || ug && stderr.Len() > 0) && !timedOut && parent.Err() == nil {
		// rg stopped without its summary (say, a glob its globset rejects,
		// or a bad pattern), the backend printed something unreadable, or
		// more errors than were kept, or ugrep complained at all: the
		// ordered path reports it properly.
		return resp, true, nil
	}
	reported := make([]string, 0, len(files))
	for _, f := range files {
		if !f.ended { // cut short by the timeout: binary or not is unknown
			f.recs = fileRecs{}
		}
		reported = append(reported, f.orderRel)
	}
	if ug {
		// ugrep searched a superset of the walker's files (ugwalk.go).
		listed := tally.listed(reported)
		files = slices.DeleteFunc(files, func(f *walkFile) bool { return !listed[f.orderRel] })
	} else if !timedOut && !tally.listsAll(reported) {
		return Response{}, true, nil // rg and the walker disagree: trust the walker
	}

	// Per-path errors from stderr.
	var buf [sniffBytes]byte
	var unreadable []string // files rg named in errors: the walker must list them too
	if !timedOut && parent.Err() == nil {
		for _, l := range strings.Split(strings.TrimSpace(lossy(stderr.String())), "\n") {
			if l == "" || ignoreFileWarning(l) {
				continue
			}
			rel, msg, ok := stderrPath(l)
			if !ok {
				// A message Vigil cannot pin on a path (or a path with a
				// newline, split across lines): the ordered path, which
				// names each file itself, answers.
				return Response{}, true, nil
			}
			abs := filepath.Join(p.pl.sandbox, rel)
			e := &walkFile{orderRel: orderRel(rel)}
			e.display = displayPath(e.orderRel)
			if fi, err := os.Lstat(abs); err == nil && fi.IsDir() {
				e.isDir = true
				if f, err := os.Open(abs); err != nil {
					msg = errText(err)
				} else {
					if _, err := f.ReadDir(1); err != nil {
						msg = errText(err)
					}
					f.Close()
				}
				msg = "cannot read directory: " + msg
			} else {
				unreadable = append(unreadable, e.orderRel)
				if v := sniff(abs, 0, buf[:]); v != "" && v != "binary" {
					msg = v
				}
			}
			e.err = &FileError{Path: e.display, Error: msg}
			files = append(files, e)
		}
	}

	if !tally.listsAll(unreadable) {
		return Response{}, true, nil // rg and the walker disagree: trust the walker
	}

	// Text files rg's offsets do not describe (finishFile): searched
	// again, alone, as the ordered path would.
	var again []item
	var againFiles []*walkFile
	for _, f := range files {
		if f.again {
			again = append(again, item{abs: filepath.Join(p.pl.orderRoot, f.orderRel), arg: "./" + f.orderRel, rel: f.display, size: -1})
			againFiles = append(againFiles, f)
		}
	}
	if len(again) > 0 && !timedOut && parent.Err() == nil {
		// whole: these files are not a run of the final order, so every
		// file's events are wanted (no cut inside the chunk).
		c := &chunk{items: again, results: make(chan fileResult, 2*len(again)+2), whole: true}
		p.searchChunk(ctx, c)
		k := 0
		for fr := range c.results {
			if fr.last {
				continue
			}
			againFiles[k].events, againFiles[k].err = fr.events, fr.err
			k++
		}
	}
	if parent.Err() == nil && ctx.Err() != nil {
		timedOut = true // the deadline passed during the -a search
	}
	slices.SortFunc(files, cmpWalkFiles)

	resp = Response{Pattern: pattern, Path: p.pl.target, Errors: []FileError{}}
	// Events are built in final order straight into matches[]: no per-file
	// slices to copy again.
	size := 0
	for _, f := range files {
		size += f.eventsAtLeast()
	}
	anyMatch := false
	if p.e.context == 0 && size <= p.e.maxResults {
		// Without context lines every kept line is one event: each file's
		// place is known, so all cores can fill matches[] at once.
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
		resp.Matches = make([]Event, size)
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
						at += len(appendWalkEvents(resp.Matches[at:at:at+len(f.recs.lines)], f.display, &f.recs))
					} else {
						at += copy(resp.Matches[at:], f.events)
					}
				}
			})
		}
		wg.Wait()
		for _, f := range files {
			if f.err != nil {
				resp.Errors = append(resp.Errors, *f.err)
			}
			anyMatch = anyMatch || f.keep
		}
		for i := range resp.Matches {
			if anyMatch {
				break
			}
			anyMatch = resp.Matches[i].Type == "match"
		}
		files = nil
	} else {
		resp.Matches = make([]Event, 0, min(size, p.e.maxResults+1))
	}
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
				return Response{}, true, nil // truncated by context lines: the ordered path decides where
			}
			resp.Matches = resp.Matches[:p.e.maxResults]
			resp.Truncated = true
			break
		}
	}
	resp.FilesScanned = tally.files

	resp.TimedOut = timedOut
	resp.Count = len(resp.Matches)
	code := 1
	if anyMatch {
		code = 0
	}
	resp.ExitCode = &code
	resp.Content = content(&resp, p.e)
	if parent.Err() != nil {
		return resp, false, parent.Err()
	}
	return resp, false, nil
}

// Span and span have the same layout, so the spans slab can serve as
// Submatches without a copy (these fail to compile otherwise).
var (
	_ [unsafe.Sizeof(Span{}) - unsafe.Sizeof(span{})]byte
	_ [unsafe.Sizeof(span{}) - unsafe.Sizeof(Span{})]byte
	_ [unsafe.Offsetof(Span{}.End) - unsafe.Offsetof(span{}.end)]byte
	_ [unsafe.Offsetof(span{}.end) - unsafe.Offsetof(Span{}.End)]byte
)

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

// matchEvent is the event of one matching line: raw is its text (lossy
// UTF-8 for the screen), spans its matches; column and match_text describe
// the first.
func matchEvent(rel string, line uint64, raw string, spans []Span, cut lineCut) Event {
	ev := Event{Type: "match", Path: rel, LineNumber: line, Line: raw, Column: 1}
	if cut.full > 0 {
		// raw is a window of the line (linecut.go); spans are offsets in
		// the whole line, which the column keeps.
		ev.TextOffset, ev.LineBytes = cut.off, cut.full
		if len(spans) > 0 {
			ev.Column = uint64(spans[0].Start) + 1
		}
		var dropped bool
		spans, dropped, ev.MatchTextTruncated = windowSpans(spans, cut.off, len(raw))
		ev.SubmatchesTruncated = dropped
	}
	if len(spans) > maxSubmatches { // see capSpans
		spans, ev.SubmatchesTruncated = spans[:maxSubmatches:maxSubmatches], true
	}
	if !utf8.ValidString(raw) {
		ev.Line = lossy(raw)
	}
	if len(spans) > 0 {
		s := spans[0]
		if cut.full == 0 {
			ev.Column = uint64(s.Start) + 1
		}
		ev.MatchText = lossy(raw[s.Start:s.End])
		ev.Submatches = spans
	}
	return ev
}

// walkFinisher decides the fate of each file rg is done with, on all
// cores, while rg goes on (finishFile).
type walkFinisher struct {
	todo chan *walkFile
	wg   sync.WaitGroup
	once sync.Once
}

// startFinisher starts the workers; past ctx's end (the deadline, or the
// walk handing over) they skip what is left, so that a timed-out search
// answers promptly with the files already read.
func (p *prepared) startFinisher(ctx context.Context) *walkFinisher {
	w := &walkFinisher{todo: make(chan *walkFile, 1<<14)}
	for range max(runtime.GOMAXPROCS(0), 1) * 2 {
		w.wg.Go(func() {
			bp := fileBufs.Get().(*[]byte)
			defer fileBufs.Put(bp)
			var texts []byte // where this worker's files keep their lines' texts
			for f := range w.todo {
				switch {
				case ctx.Err() != nil:
				case p.be.Name == "ugrep":
					p.finishUgrepFile(f, bp, &texts)
				default:
					p.finishFile(f, bp, &texts)
				}
			}
		})
	}
	return w
}

// add queues a file rg is done with; its records must be sealed.
func (w *walkFinisher) add(f *walkFile) { w.todo <- f }

// wait returns once every queued file is finished (no more may be added).
func (w *walkFinisher) wait() {
	w.once.Do(func() { close(w.todo) })
	w.wg.Wait()
}

// finishFile decides a reported file's fate. It is read and sniffed
// exactly as on the ordered path (NUL in the first 8 KiB: binary, dropped
// but counted; over max_file_size_bytes: dropped, counted), so what rg did
// with encodings or NUL bytes never decides it. A text file that starts
// with a byte-order mark (rg's offsets are then in its transcoded text) is
// searched again as the ordered path would, and so is one wholeLastLine
// describes; the lines of the rest come from the bytes read, at rg's
// offsets. bp is the read buffer and texts the slab for the lines' texts,
// both the worker's own.
func (p *prepared) finishFile(f *walkFile, bp *[]byte, texts *[]byte) {
	if len(f.recs.lines) == 0 {
		return
	}
	data, err := readRegularInto(filepath.Join(p.pl.orderRoot, f.orderRel), (*bp)[:0], p.e.maxSize)
	*bp = data[:0]
	switch {
	case err == errTooLarge:
		f.recs = fileRecs{}
	case err != nil:
		f.recs = fileRecs{}
		f.err = &FileError{Path: f.display, Error: errText(err)}
	case bytes.IndexByte(data[:min(len(data), sniffBytes)], 0) >= 0:
		f.recs = fileRecs{} // binary
	case hasBOM(data) || wholeLastLine(data, &f.recs):
		f.again = true
	default:
		p.keepLines(f, data, texts)
	}
}

// keepLines gives a text file's records their lines from data, the
// file's bytes as the backend searched them, and keeps the file; one that
// no longer fits its records is a per-file error. The texts go to the
// tail of texts, a slab shared by the worker's files (one allocation per
// megabyte, not a doubling one per file).
func (p *prepared) keepLines(f *walkFile, data []byte, texts *[]byte) {
	if cap(*texts)-len(*texts) < 64<<10 {
		*texts = make([]byte, 0, 1<<20)
	}
	slab := *texts
	f.recs.text = slab[len(slab):]
	if !resolveLinesCut(data, &f.recs, p.e.maxLine) {
		f.recs = fileRecs{}
		f.err = &FileError{Path: f.display, Error: "file changed while it was searched"}
		return
	}
	t := f.recs.text
	f.recs.text = t[:len(t):len(t)]
	if len(t) > 0 && cap(slab)-len(slab) >= len(t) && &slab[:len(slab)+1][len(slab)] == &t[0] {
		*texts = slab[:len(slab)+len(t)] // written in place: keep it
	}
	f.keep = true
}

// wholeLastLine reports whether a record spans an unterminated last line
// from its start to the end of the file. That is what rg 13's -o prints
// for a line whose only match is the empty one at the end of the file,
// which its printer drops (--json then gives no submatch): "$" or "x*" on
// "abc\nfoo". A real match over such a whole line looks the same, so such
// files are searched again; they are rare.
func wholeLastLine(data []byte, f *fileRecs) bool {
	if len(data) == 0 || data[len(data)-1] == '\n' || len(f.lines) == 0 {
		return false
	}
	start := bytes.LastIndexByte(data, '\n') + 1
	last := f.lines[len(f.lines)-1]
	for _, sp := range f.spans[last.span0:last.span1] {
		if sp.start == start && sp.end == len(data) {
			return true
		}
	}
	return false
}

// hasBOM reports whether data starts with a UTF-8 or UTF-16 byte-order
// mark, which makes rg search a transcoded text.
func hasBOM(data []byte) bool {
	return bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}) ||
		bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF})
}

// walkTally is what Vigil's own walk says about the eligible files: rg 13
// reports no count of the files it searched ("searches" counts only files
// with matches), and the set checks that rg selected no file the walker
// would not have.
type walkTally struct {
	files    int64
	list     []string // raw paths relative to the order root, as walked
	over     bool     // max_files reached: the ordered path answers
	rgUnsafe bool     // an ignore file rg may read differently: the ordered path answers
	newline  bool     // a path with a line end, which rg's output cannot frame: the ordered path answers
	// A reason the ordered path answers, found as soon as the walker
	// meets it (tooLargeUnfit; for ugrep, ugwalk.go).
	unfit string
}

// listsAll reports whether the walker selected every one of rels.
func (t *walkTally) listsAll(rels []string) bool {
	found := t.listed(rels)
	for _, r := range rels {
		if !found[r] {
			return false
		}
	}
	return true
}

// listed reports which of rels the walker selected. One pass over the
// list against a set of the (usually fewer) rels: cheaper than sorting or
// hashing the whole walk.
func (t *walkTally) listed(rels []string) map[string]bool {
	found := make(map[string]bool, len(rels))
	for _, r := range rels {
		found[r] = false
	}
	for _, l := range t.list {
		if _, ok := found[l]; ok {
			found[l] = true
		}
	}
	return found
}

// tallyWalk runs the walker, in no particular order, without sniffing or
// searching anything. Past max_files it cancels rg, since the ordered
// path must answer. With sizes it learns every file's size, and hands
// over past walkTooLargeBudget of files over the cap (hugewatch.go says
// when that is needed).
func (p *prepared) tallyWalk(ctx context.Context, cancel func(), sizes bool) walkTally {
	t := walkTally{list: make([]string, 0, 1024)}
	e := p.e
	e.maxFiles = 0 // counted here
	ug := p.be.Name == "ugrep"
	var waste walkWaste
	unfit := func(why string) bool {
		t.unfit = why // the ordered path answers: stop both
		cancel()
		return false
	}
	w := &walker{ctx: ctx, pl: p.pl, e: e, deny: p.deny, include: p.include, exclude: p.exclude, unordered: true,
		sizes: sizes,
		emit: func(it item) bool {
			t.newline = t.newline || strings.IndexByte(it.arg, '\n') >= 0 || strings.IndexByte(it.rel, '\n') >= 0
			why := tooLargeUnfit(it, &waste)
			if ug && why == "" {
				why = p.ugrepUnfitItem(it)
			}
			if why != "" {
				return unfit(why)
			}
			if it.abs != "" {
				t.files++
				t.list = append(t.list, it.arg[2:])
			}
			if p.e.maxFiles > 0 && t.files >= p.e.maxFiles {
				t.over = true
				cancel()
				return false
			}
			return true
		}}
	if ug {
		w.ignored = func(c child, abs string) bool {
			if c.size < 0 && !c.isDir {
				if fi, err := os.Lstat(abs); err == nil {
					c.size = fi.Size()
				}
			}
			if why := p.ugrepUnfitIgnored(c, &waste); why != "" {
				return unfit(why)
			}
			return true
		}
	}
	w.run()
	// At max_files the ordered walk stops, and so reports nothing found
	// after the last file (an unreadable directory, say): it answers then.
	if p.e.maxFiles > 0 && t.files >= p.e.maxFiles {
		t.over = true
		cancel()
	}
	t.rgUnsafe = w.rgUnsafe
	return t
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

// ignoreFileWarning reports rg's complaint about a line of an ignore file,
// which Vigil's walker skips silently.
func ignoreFileWarning(l string) bool {
	l = strings.TrimPrefix(l, "rg: ")
	for _, n := range ignoreNames {
		if i := strings.Index(l, n+": line "); i >= 0 && (i == 0 || l[i-1] == '/') {
			return true
		}
	}
	return false
}

// stderrPath reads rg's "./path: message (os error N)" into the path
// relative to the sandbox and Vigil's wording of the message. rg's I/O
// messages hold no ": " of their own, so the path is everything before
// the last one (a name may contain ": ").
func stderrPath(l string) (rel, msg string, ok bool) {
	l = strings.TrimPrefix(l, "rg: ")
	k := strings.LastIndex(l, ": ")
	if !strings.HasPrefix(l, "./") || k < 2 {
		return "", "", false
	}
	msg = strings.TrimSpace(l[k+2:])
	if i := strings.Index(msg, " (os error"); i >= 0 {
		msg = msg[:i]
	}
	return l[2:k], strings.ToLower(strings.TrimSuffix(msg, ".")), true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
