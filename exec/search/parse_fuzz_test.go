package search

import (
	"fmt"
	"strings"
	"testing"
)

func FuzzParseRG(f *testing.F) {
	f.Add([]byte(`{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"x\n"},"line_number":1,"submatches":[{"match":{"text":"x"},"start":0,"end":1}]}}`))
	f.Add([]byte(`{"type":"match","data":{"path":{"bytes":"/w=="},"lines":{"bytes":"eA=="},"line_number":1,"submatches":[{"start":5,"end":1}]}}`))
	// A long line's message, which cutRGMatch cuts.
	long := `{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"` + strings.Repeat("x", maxSubmatches+2) + `\n"},"line_number":1,"absolute_offset":0,"submatches":[`
	for i := range maxSubmatches + 2 {
		long += fmt.Sprintf(`{"match":{"text":"x"},"start":%d,"end":%d},`, i, i+1)
	}
	f.Add([]byte(strings.TrimSuffix(long, ",") + "]}}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, ok, err := parseRGLine(b)
		if ok && err == nil {
			for _, s := range rec.spans {
				_ = rec.text[s.start:s.end]
			}
		}
		// A cut message (a long line's start) is always one the parser
		// reads, with at most maxSubmatches+1 spans.
		if cut, ok := cutRGMatch(b); ok {
			rec, ok, err := parseRGLine(cut)
			if !ok || err != nil || len(rec.spans) > maxSubmatches+1 {
				t.Fatalf("cut %q: ok %v err %v, %d spans", cut, ok, err, len(rec.spans))
			}
		}
	})
}

func FuzzParseUgrep(f *testing.F) {
	f.Add([]byte(`{"f":"./a","n":1,"b":2,"d":3}`+"\n"), []byte("x\u00e9err\n"))
	f.Add([]byte("{\"f\":\"./\x01\xff\",\"n\":1,\"b\":99,\"d\":99}"), []byte("\xc3"))
	f.Add([]byte(`{"f":"./a","n":2,"b":4,"d":1}`), []byte("abc\r\ndef"))
	f.Fuzz(func(t *testing.T, b, data []byte) {
		rec, err := parseUgrepLine(b)
		if err != nil {
			return
		}
		// Whatever the file holds, resolving never panics, and when it
		// succeeds every span lies within its line.
		var fr fileRecs
		fr.add(rec, 10)
		fr.add(rec, 10) // a second match on the same line
		if resolveLines(data, &fr) {
			for _, l := range fr.lines {
				text := fr.text[l.text0:l.text1]
				for _, s := range fr.spans[l.span0:l.span1] {
					_ = text[s.start:s.end]
				}
			}
		}
	})
}
