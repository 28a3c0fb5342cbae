package search

import "unicode/utf8"

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

// contextEvent is the event of one context line, cut to the cap from its
// start (it holds no match to centre on).
func contextEvent(rel string, line uint64, raw []byte, limit int) Event {
	text, lc := cutLine(raw, 0, limit)
	return Event{Type: "context", Path: rel, LineNumber: line, Line: lossy(string(text)),
		TextOffset: lc.off, LineBytes: lc.full}
}
