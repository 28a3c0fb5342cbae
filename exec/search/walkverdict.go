package search

// walkEnd is what is known once a walking backend has exited and the
// walker's tally is in: all that decides whether the walk answers.
type walkEnd struct {
	ugrep bool
	// finished: the backend says it searched everything (rg's --stats
	// summary; ugrep's exit code 0 or 1).
	finished bool
	// gaveUp: it exited with code 2 unfinished (a bad pattern, a glob
	// rg's globset rejects; with ugrep, any error).
	gaveUp bool
	// over: more matching lines than max_results (truncation is certain,
	// and the ordered path stops early), or more matches held than
	// walkSpanCap.
	over bool
	// tally is the walker's (walkTally): max_files reached, a path with
	// a line end, an ignore file rg may read otherwise, or a reason found
	// as it walked (unfit).
	maxFiles, newline, rgUnsafe bool
	unfit                       string
	huge                        bool // the watch saw a file over the cap and the budget open (hugewatch.go)
	malformed                   bool // output Vigil cannot read
	stderrFull                  bool // more on stderr than was kept
	stderr                      bool // anything on stderr
	timedOut                    bool // the search's deadline passed
	cancelled                   bool // the caller cancelled
}

// Why the ordered path answers instead of a walk.
const (
	handGaveUp     = "the backend gave up (the ordered path's check reports the pattern)"
	handTruncated  = "the result is truncated (the ordered path stops early)"
	handMaxFiles   = "max_files reached (the ordered walk stops there)"
	handNewline    = "a path with a line end, which the backend's output cannot frame"
	handRGUnsafe   = "an ignore file rg may read otherwise than the walker"
	handHuge       = "a file over max_file_size_bytes, past what the backend may read for nothing"
	handUnfinished = "the backend stopped without saying it searched everything"
	handMalformed  = "backend output Vigil cannot read"
	handStderrFull = "more messages than were kept"
	handUgrepSaid  = "ugrep complained (the ordered path names each failing file)"
)

// verdict decides how a walk ends. handOver says why the ordered path must
// answer instead ("" when the walk answers); askPattern, that the deadline
// cut the backend off before it said whether the pattern compiles, so the
// pattern is checked before a timed-out answer (a bad pattern is BadArgs,
// not an empty timed-out answer). After a timeout or the caller's cancel
// the walk answers with what it has: the ordered path would not have time
// either.
func (w walkEnd) verdict() (handOver string, askPattern bool) {
	switch {
	case w.gaveUp:
		return handGaveUp, false // deadline or not
	case w.over:
		return handTruncated, false
	case w.maxFiles:
		return handMaxFiles, false
	case w.newline:
		return handNewline, false
	case !w.ugrep && w.rgUnsafe:
		return handRGUnsafe, false
	case w.unfit != "":
		return w.unfit, false
	case w.huge:
		return handHuge, false
	case w.timedOut:
		return "", !w.finished
	case w.cancelled:
		return "", false
	case !w.finished:
		return handUnfinished, false
	case w.malformed:
		return handMalformed, false
	case w.stderrFull:
		return handStderrFull, false
	case w.ugrep && w.stderr:
		return handUgrepSaid, false
	}
	return "", false
}
