package search

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

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
