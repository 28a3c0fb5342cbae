package search

import "testing"

// TestWalkVerdict is the verdict table: each reason a finished walk hands
// the search over to the ordered path, the order they are weighed in, and
// when the walk answers (with a pattern check first when the deadline cut
// the backend off before it said whether the pattern compiles).
func TestWalkVerdict(t *testing.T) {
	done := walkEnd{finished: true}                // rg said it searched everything
	ugDone := walkEnd{ugrep: true, finished: true} // ugrep exited 0 or 1
	with := func(w walkEnd, f func(*walkEnd)) walkEnd { f(&w); return w }
	cases := []struct {
		name       string
		end        walkEnd
		handOver   string
		askPattern bool
	}{
		{"rg finished cleanly", done, "", false},
		{"ugrep finished cleanly", ugDone, "", false},
		{"gave up (bad pattern)", walkEnd{gaveUp: true}, handGaveUp, false},
		{"gave up, even past the deadline", walkEnd{gaveUp: true, timedOut: true}, handGaveUp, false},
		{"gave up, even cancelled", walkEnd{gaveUp: true, cancelled: true}, handGaveUp, false},
		{"truncation certain", with(done, func(w *walkEnd) { w.over = true }), handTruncated, false},
		{"truncation certain past the deadline", with(done, func(w *walkEnd) { w.over, w.timedOut = true, true }), handTruncated, false},
		{"max_files reached", with(done, func(w *walkEnd) { w.maxFiles = true }), handMaxFiles, false},
		{"a path with a line end", with(ugDone, func(w *walkEnd) { w.newline = true }), handNewline, false},
		{"an ignore file rg reads otherwise", with(done, func(w *walkEnd) { w.rgUnsafe = true }), handRGUnsafe, false},
		{"rg-unsafe ignore files do not matter to ugrep", with(ugDone, func(w *walkEnd) { w.rgUnsafe = true }), "", false},
		{"the walker found the search unfit", with(ugDone, func(w *walkEnd) { w.unfit = "an ignored directory" }), "an ignored directory", false},
		{"a huge file was open", with(done, func(w *walkEnd) { w.huge = true }), handHuge, false},
		{"truncation outranks the rest", with(done, func(w *walkEnd) { w.over, w.maxFiles, w.huge, w.malformed = true, true, true, true }), handTruncated, false},
		{"cut off by the deadline: check the pattern", walkEnd{timedOut: true}, "", true},
		{"past the deadline but finished", with(done, func(w *walkEnd) { w.timedOut = true }), "", false},
		{"past the deadline, unreadable output answers anyway", walkEnd{timedOut: true, malformed: true, stderrFull: true}, "", true},
		{"cancelled by the caller", walkEnd{cancelled: true, malformed: true}, "", false},
		{"rg stopped without its summary", walkEnd{}, handUnfinished, false},
		{"ugrep killed or failing", walkEnd{ugrep: true}, handUnfinished, false},
		{"malformed output", with(done, func(w *walkEnd) { w.malformed = true }), handMalformed, false},
		{"more stderr than kept", with(done, func(w *walkEnd) { w.stderr, w.stderrFull = true, true }), handStderrFull, false},
		{"rg's stderr is pinned on paths later", with(done, func(w *walkEnd) { w.stderr = true }), "", false},
		{"ugrep said anything", with(ugDone, func(w *walkEnd) { w.stderr = true }), handUgrepSaid, false},
	}
	for _, c := range cases {
		handOver, ask := c.end.verdict()
		if handOver != c.handOver || ask != c.askPattern {
			t.Errorf("%s: verdict (%q, ask pattern %v), want (%q, %v)", c.name, handOver, ask, c.handOver, c.askPattern)
		}
	}
}
