package search

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestCmpChildIsKeyOrder checks the allocation-free child comparison
// against the plain definition: bytewise order of key + "/" for
// directories, then raw name.
func TestCmpChildIsKeyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alpha := []string{"a", "b", "-", "+", ".", "/", " ", "é", "\u0301", "0"}
	gen := func() child {
		var b strings.Builder
		for range r.IntN(4) {
			b.WriteString(alpha[r.IntN(len(alpha))])
		}
		name := b.String()
		return child{name: name, key: sortKey(name), isDir: r.IntN(2) == 0}
	}
	sign := func(x int) int { return min(max(x, -1), 1) }
	for range 20000 {
		a, b := gen(), gen()
		want := strings.Compare(a.key+dirSlash(a.isDir), b.key+dirSlash(b.isDir))
		if want == 0 {
			want = strings.Compare(a.name, b.name)
		}
		if got := cmpChild(a, b); sign(got) != want {
			t.Fatalf("cmpChild(%+v, %+v) = %d, want %d", a, b, got, want)
		}
	}
}

// TestGlobFastPathsAgree checks that the literal shortcuts decide exactly
// what the compiled regexp decides.
func TestGlobFastPathsAgree(t *testing.T) {
	globs := []string{".git/", "**/.env", "**/*.pem", "**/id_*", "**/.ssh/", "*.go", "main.go", "a/b.txt", "x*", "*", "*a*", "a,b", "/top.txt"}
	paths := []string{"", ".git", "a/.git", ".env", "x/.env", "k.pem", "d/k.pem", ".pem", "id_rsa", "d/id_", "xid_", "main.go", "a/main.go", "a/b.txt", "c/a/b.txt", "x", "xy/z", "a,b", "top.txt", "d/top.txt", "pem"}
	for _, gs := range globs {
		g, err := compileGlob(gs)
		if err != nil {
			t.Fatal(err)
		}
		slow := *g
		slow.kind = globRegexp
		for _, p := range paths {
			for _, dir := range []bool{false, true} {
				if g.match(p, dir) != slow.match(p, dir) {
					t.Errorf("glob %q on %q (dir=%v): fast %v, regexp %v", gs, p, dir, g.match(p, dir), slow.match(p, dir))
				}
			}
		}
	}
}

// FuzzParseRGFast checks that the fast reader of rg match messages, when
// it accepts a line, reads exactly what the generic reader reads.
func FuzzParseRGFast(f *testing.F) {
	f.Add([]byte(`{"type":"match","data":{"path":{"text":"./a b.go"},"lines":{"text":"x\"err\\u00e9 err\r\n"},"line_number":12,"absolute_offset":345,"submatches":[{"match":{"text":"err"},"start":2,"end":5},{"match":{"text":"err"},"start":8,"end":11}]}}`))
	f.Add([]byte(`{"type":"match","data":{"path":{"text":"./a"},"lines":{"text":"x\n"},"line_number":1,"absolute_offset":0,"submatches":[]}}`))
	f.Add([]byte(`{"type":"match","data":{"path":{"text":"./a"},"lines":{"text":"x\n"},"line_number":1,"absolute_offset":0,"submatches":[{"match":{"text":"x"},"start":0,"end":9}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var pb parseBuf
		fast, ok := parseRGMatchFast(b, &pb)
		if !ok {
			return
		}
		slow, ok, err := parseRGGeneric(b)
		if !ok || err != nil {
			t.Fatalf("fast accepted what generic rejects (%v): %q", err, b)
		}
		if string(fast.path) != string(slow.path) || string(fast.text) != string(slow.text) || fast.line != slow.line || !slices.Equal(fast.spans, slow.spans) {
			t.Fatalf("fast %+v != generic %+v for %q", fast, slow, b)
		}
	})
}

// TestWriteJSONIsAppendJSON checks that the streaming encoder writes the
// very bytes of AppendJSON, also when buffer cuts fall inside multi-byte
// characters, invalid UTF-8 and U+2028 in the content view.
func TestWriteJSONIsAppendJSON(t *testing.T) {
	var b strings.Builder
	pieces := []string{"é", "\u2028", "\xff", "\xe2\x82", "a\"b\\", "\t\n", "日本", "x"}
	r := rand.New(rand.NewPCG(3, 4))
	for b.Len() < 3*writeChunk+17 {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	// Serial (small), parallel because of the content, parallel because of
	// the events (with a last, partial piece).
	for _, c := range []struct {
		events  int
		content string
	}{{3000, "short"}, {3000, b.String()}, {3*segmentEvents + 5, "x"}} {
		code := 0
		resp := Response{Pattern: "p", Path: "/r", Content: c.content, ExitCode: &code, Stderr: "warn\n",
			Errors: []FileError{{Path: "a", Error: "permission denied"}}}
		for i := range c.events {
			resp.Matches = append(resp.Matches, Event{Type: "match", Path: "f.go", LineNumber: uint64(i + 1), Column: 2,
				Line: strings.Repeat("é\xff", i%50), MatchText: "é", Submatches: []Span{{0, 2}}})
		}
		resp.Count = len(resp.Matches)
		var w strings.Builder
		if err := resp.WriteJSON(&w); err != nil {
			t.Fatal(err)
		}
		want := string(resp.AppendJSON(nil))
		if w.String() != want {
			t.Fatalf("%d events: WriteJSON differs from AppendJSON (%d vs %d bytes)", c.events, w.Len(), len(want))
		}
		if !json.Valid([]byte(want)) {
			t.Fatalf("%d events: not valid JSON", c.events)
		}
		// A failing writer stops the output and reports the error.
		fw := &failingWriter{after: 2}
		if err := resp.WriteJSON(fw); err == nil || fw.writes != 2 {
			t.Fatalf("%d events: err=%v after %d writes", c.events, err, fw.writes)
		}
	}
}

type failingWriter struct{ after, writes int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.writes >= f.after {
		return 0, errors.New("disk full")
	}
	f.writes++
	return len(p), nil
}

// FuzzParseUgrepBuf checks that parsing into reused scratch space reads
// what a fresh parse reads, also after a previous line filled the scratch.
func FuzzParseUgrepBuf(f *testing.F) {
	f.Add([]byte(`{"f":"./a","n":1,"b":2,"d":3}`+"\n"), []byte(`{"f":"./b","n":2,"b":1,"d":1}`))
	f.Fuzz(func(t *testing.T, first, b []byte) {
		var pb parseBuf
		_, _ = parseUgrepLineBuf(first, &pb)
		got, err1 := parseUgrepLineBuf(b, &pb)
		want, err2 := parseUgrepLine(b)
		if (err1 == nil) != (err2 == nil) || string(got.path) != string(want.path) || string(got.text) != string(want.text) || got.line != want.line || !slices.Equal(got.spans, want.spans) {
			t.Fatalf("buffered %+v (%v) != fresh %+v (%v)", got, err1, want, err2)
		}
	})
}

// content built in parallel segments is the same text as in one go.
func TestContentOfLargeResponse(t *testing.T) {
	var r Response
	for i := range 3*segmentEvents + 7 {
		typ := "match"
		if i%3 == 0 {
			typ = "context"
		}
		r.Matches = append(r.Matches, Event{Type: typ, Path: fmt.Sprintf("d/f%d.go", i/10), LineNumber: uint64(i + 1), Column: uint64(i%1234 + 1), Line: strings.Repeat("x", i%40)})
	}
	r.Count, r.Truncated = len(r.Matches), true
	got := content(&r, effective{maxResults: r.Count})
	want := contentLines(r.Matches) + "[truncated: more than " + fmt.Sprint(r.Count) + " results; narrow the pattern or raise max_results]\n"
	if got != want || !strings.Contains(got, "d/f0.go-1-\n") || !strings.Contains(got, "d/f614.go:6149:"+fmt.Sprint(6148%1234+1)+":"+strings.Repeat("x", 6148%40)+"\n") {
		t.Fatalf("content differs (%d vs %d bytes)", len(got), len(want))
	}
}

// The fast ugrep reader gives what the generic one gives, whenever it
// reads a line at all.
func FuzzParseUgrepFast(f *testing.F) {
	f.Add([]byte(`{"f":"./a","n":1,"b":2,"d":3}` + "\n"))
	f.Add([]byte(`{"f":"a b\x01\xff","n":12,"b":0,"d":0}`))
	f.Add([]byte(`{"f":"./a\"b","n":1,"b":2,"d":3}`))
	f.Add([]byte(`{"f":"./a","n":1,"b":999999999999999,"d":3}`))
	f.Add([]byte(`{"f":"./a","n":0,"b":2,"d":3}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := parseUgrepFast(b, nil)
		want, err := parseUgrepGeneric(b, nil)
		if !ok {
			return
		}
		if err != nil || string(got.path) != string(want.path) || got.line != want.line || !slices.Equal(got.spans, want.spans) {
			t.Fatalf("%q: fast %+v, generic %+v (%v)", b, got, want, err)
		}
	})
}

// The fast reader takes ugrep's usual records: a regression to the
// generic reader would only show as lost speed.
func TestParseUgrepFastTakesUsualRecords(t *testing.T) {
	for _, l := range []string{`{"f":"./a/b.go","n":7,"b":120,"d":3}` + "\n", `{"f":"x y","n":1,"b":0,"d":0}`} {
		if _, ok := parseUgrepFast([]byte(l), nil); !ok {
			t.Errorf("%q: not read by the fast reader", l)
		}
	}
	for _, l := range []string{`{"f":"./a\\b","n":7,"b":120,"d":3}`, `{"n":7,"f":"a","b":120,"d":3}`, `{"f":"a","n":7,"b":1234567890123456,"d":3}`} {
		if _, ok := parseUgrepFast([]byte(l), nil); ok {
			t.Errorf("%q: read by the fast reader, which is for the plain shape only", l)
		}
	}
}
