package search

import (
	"context"
	"io"
	"slices"
	"time"
)

// testHookRGWalkStarted runs once rg has started (tests cancel there).
var testHookRGWalkStarted = func() {}

// walkEligible reports whether the backend can walk the tree itself for
// this request: the rg walk (rgwalk.go), or the ugrep walk (ugwalk.go).
func (p *prepared) walkEligible() bool {
	return p.rgWalkEligible() || p.ugrepWalkEligible()
}

// walkRun is one run of a walking backend: what its stages share.
type walkRun struct {
	p       *prepared
	ug      bool
	parent  context.Context // the caller's
	ctx     context.Context // parent with the search's deadline
	cancel  context.CancelFunc
	stderr  limitedBuffer
	watch   *hugeWatch // nil where the walker learns sizes instead
	tallied chan walkTally
}

// runWalk runs the rg walk, or the ugrep walk with the ugrep backend, in
// stages: start the backend with the huge-file watch and the walker's
// tally beside it (start); read its output (walkStream), each file read
// for its lines as soon as the backend is done with it (walkFinisher);
// decide whether the walk answers (walkEnd.verdict); keep the files the
// walker selected (selected); pin stderr's messages on paths
// (pinRGStderr); search unfit files again (searchAgain); build the
// response (walkResponse). fallback means the ordered path must answer
// instead (nothing has been delivered). The backend rejecting the pattern
// ends it without a summary (rg) or with exit code 2 (ugrep), which falls
// back too: the ordered path's check then reports the pattern.
func (p *prepared) runWalk(parent context.Context, pattern string) (resp Response, fallback bool, err error) {
	ctx, cancel := context.WithTimeout(parent, time.Duration(p.e.timeoutMS)*time.Millisecond)
	defer cancel()
	r := &walkRun{p: p, ug: p.be.Name == "ugrep", parent: parent, ctx: ctx, cancel: cancel}
	stdout, wait, err := r.start()
	if err != nil {
		return resp, true, nil
	}
	defer func() { cancel(); r.watch.wait() }()
	fin := p.startFinisher(ctx)
	defer fin.wait()
	s := p.newWalkStream(fin)
	s.read(ctx, stdout, cancel)

	end, tally := r.end(s, fin, wait())
	handOver, askPattern := end.verdict()
	if handOver != "" {
		return resp, true, nil
	}
	if askPattern {
		if err := checkPattern(parent, p.be, p.e, p.pat, p.fixed, p.env); err != nil {
			return Response{}, false, err
		}
	}
	timedOut := end.timedOut
	files, ok := r.selected(s.files, &tally, timedOut)
	if !ok {
		return Response{}, true, nil // rg and the walker disagree: trust the walker
	}
	if !timedOut && parent.Err() == nil {
		errs, unreadable, ok := p.pinRGStderr(r.stderr.String(), s.orderRel)
		if !ok || !tally.listsAll(unreadable) {
			// A message Vigil cannot pin on a path (the ordered path,
			// which names each file itself, answers), or rg and the
			// walker disagree: trust the walker.
			return Response{}, true, nil
		}
		files = append(files, errs...)
		p.searchAgain(ctx, files)
	}
	if parent.Err() == nil && ctx.Err() != nil {
		timedOut = true // the deadline passed during the search again
	}
	resp, ok = p.walkResponse(pattern, files, tally.files, timedOut)
	if !ok {
		return Response{}, true, nil // truncated by context lines: the ordered path decides where
	}
	return resp, false, parent.Err()
}

// start starts the backend, the watch of the huge files it opens (or
// else the walker learns sizes: hugewatch.go) and the walker's tally.
func (r *walkRun) start() (stdout io.Reader, wait func() error, err error) {
	args := r.p.rgWalkArgs()
	if r.ug {
		args = r.p.ugrepWalkArgs()
	}
	cmd := command(r.ctx, r.p.be, r.p.pl.sandbox, r.p.env, args)
	cmd.Stderr = &r.stderr
	if stdout, wait, err = startFollowed(cmd, r.p.e.maxSize); err != nil {
		return nil, nil, err
	}
	testHookRGWalkStarted()
	r.watch = r.p.watchHugeFiles(r.ctx, cmd.Process.Pid, r.cancel)
	r.tallied = make(chan walkTally, 1)
	go func() { r.tallied <- r.p.tallyWalk(r.ctx, r.cancel, r.watch == nil) }()
	return stdout, wait, nil
}

// end waits for the finisher and the tally once the backend has exited
// (werr), and tells what the verdict needs.
func (r *walkRun) end(s *walkStream, fin *walkFinisher, werr error) (walkEnd, walkTally) {
	code := exitCode(werr)
	finished := s.searches >= 0
	if r.ug {
		finished = r.ctx.Err() == nil && (code == 0 || code == 1)
	}
	s.end(finished)
	fin.wait()
	gaveUp := !finished && code == 2
	if gaveUp {
		r.cancel() // the tally is not needed
	}
	tally := <-r.tallied
	return walkEnd{
		ugrep: r.ug, finished: finished, gaveUp: gaveUp, over: s.over,
		maxFiles: tally.over, newline: tally.newline, rgUnsafe: tally.rgUnsafe, unfit: tally.unfit,
		huge:      r.watch != nil && r.watch.found.Load(),
		malformed: s.malformed, stderrFull: r.stderr.Len() >= stderrLimit, stderr: r.stderr.Len() > 0,
		timedOut: r.parent.Err() == nil && r.ctx.Err() != nil, cancelled: r.parent.Err() != nil,
	}, tally
}

// selected keeps the files the walker selected, each file cut short by the
// timeout emptied (binary or not is unknown). ugrep searched a superset of
// the walker's files (ugwalk.go); rg must have selected no file the walker
// would not have (false otherwise).
func (r *walkRun) selected(files []*walkFile, tally *walkTally, timedOut bool) ([]*walkFile, bool) {
	reported := make([]string, 0, len(files))
	for _, f := range files {
		if !f.ended {
			f.recs = fileRecs{}
		}
		reported = append(reported, f.orderRel)
	}
	if r.ug {
		listed := tally.listed(reported)
		return slices.DeleteFunc(files, func(f *walkFile) bool { return !listed[f.orderRel] }), true
	}
	return files, timedOut || tally.listsAll(reported)
}
