package search

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLineWindow(t *testing.T) {
	const limit = 64
	lines := map[string]string{
		"ascii":    strings.Repeat("x", 1000),
		"multi":    strings.Repeat("é", 500),          // 2-byte characters
		"wide":     strings.Repeat("\U0001F600", 250), // 4-byte characters
		"mixed":    strings.Repeat("aé€\U0001F600", 100),
		"invalid":  strings.Repeat("a\xff\xc3", 300),
		"exact":    strings.Repeat("x", limit),
		"short":    "abc",
		"shortEnd": strings.Repeat("€", 30),
	}
	for name, line := range lines {
		for first := 0; first <= len(line); first += max(1, len(line)/37) {
			text, cut := cutLine([]byte(line), first, limit)
			if len(line) <= limit {
				if cut.full != 0 || string(text) != line {
					t.Fatalf("%s: a line of %d bytes was cut", name, len(line))
				}
				continue
			}
			lo, hi := cut.off, cut.off+len(text)
			if cut.full != len(line) || len(text) > limit || len(text) < limit-utf8.UTFMax*2 {
				t.Fatalf("%s first=%d: window [%d,%d) of %d", name, first, lo, hi, len(line))
			}
			if first < lo || first > hi {
				t.Errorf("%s first=%d: window [%d,%d) leaves out the first match", name, first, lo, hi)
			}
			if name != "invalid" && (!utf8.ValidString(string(text))) {
				t.Errorf("%s first=%d: window [%d,%d) cuts a character", name, first, lo, hi)
			}
		}
	}
}

// longLineTree writes a file whose line 2 is long, with a match far into
// it, and long context lines around it.
func longLineTree(t *testing.T) (root, long string) {
	root = t.TempDir()
	long = strings.Repeat("é", 5000) + "NEEDLE" + strings.Repeat("y", 3000) + "NEEDLE" + strings.Repeat("€", 4000)
	write(t, root, "a.txt", strings.Repeat("c", 9000)+"\n"+long+"\n"+strings.Repeat("d", 9000)+"\nshort NEEDLE\n")
	return root, long
}

func TestLongLineIsCutAroundFirstMatch(t *testing.T) {
	root, long := longLineTree(t)
	first := strings.Index(long, "NEEDLE")
	eachBackend(t, func(t *testing.T, be string) {
		var want string
		for _, req := range []string{`{"pattern":"NEEDLE"}`, `{"pattern":"NEEDLE","context":1}`} {
			for _, stream := range []bool{false, true} {
				var emit func(Batch)
				if stream {
					emit = func(Batch) {}
				}
				resp, err := searchEmit(be, root, req, emit)
				if err != nil {
					t.Fatal(err)
				}
				var m *Event
				for i := range resp.Matches {
					ev := &resp.Matches[i]
					if ev.Type == "match" && ev.LineNumber == 2 {
						m = ev
					}
					if len(ev.Line) > DefaultMaxLineBytes || !utf8.ValidString(ev.Line) {
						t.Errorf("%s: line %d: %d bytes", req, ev.LineNumber, len(ev.Line))
					}
					if ev.Type == "context" && (ev.LineBytes != 9000 || ev.TextOffset != 0) {
						t.Errorf("%s: context line %d: cut %d of %d", req, ev.LineNumber, ev.TextOffset, ev.LineBytes)
					}
					if ev.LineNumber == 4 && (ev.Cut() || strings.Contains(string(ev.AppendJSON(nil)), "truncated")) {
						t.Errorf("%s: a short line is marked cut: %s", req, ev.AppendJSON(nil))
					}
				}
				if m == nil {
					t.Fatalf("%s: no match on line 2", req)
				}
				if m.LineBytes != len(long) || m.Column != uint64(first)+1 || long[m.TextOffset:m.TextOffset+len(m.Line)] != m.Line {
					t.Errorf("%s: line 2: column %d, window at %d of %d", req, m.Column, m.TextOffset, m.LineBytes)
				}
				if len(m.Submatches) != 2 || m.SubmatchesTruncated || m.MatchText != "NEEDLE" {
					t.Errorf("%s: submatches %v (truncated %v), match_text %q", req, m.Submatches, m.SubmatchesTruncated, m.MatchText)
				}
				for _, s := range m.Submatches {
					if m.Line[s.Start:s.End] != "NEEDLE" {
						t.Errorf("%s: submatch %v is %q in lines.text", req, s, m.Line[s.Start:s.End])
					}
				}
				js := string(m.AppendJSON(nil))
				if !strings.Contains(js, `"text_truncated":{"offset":`+strconv.Itoa(m.TextOffset)+`,"line_bytes":`+strconv.Itoa(len(long))+`}`) {
					t.Errorf("%s: JSON %s", req, js[:200])
				}
				if !strings.Contains(resp.Content, "[cut: line of "+strconv.Itoa(len(long))+" bytes, shown from byte "+strconv.Itoa(m.TextOffset)+"]\n") {
					t.Errorf("%s: content has no cut note", req)
				}
				if len(resp.Content) > 5*DefaultMaxLineBytes {
					t.Errorf("%s: content of %d bytes", req, len(resp.Content))
				}
				if req == `{"pattern":"NEEDLE","context":1}` {
					if s := responseSummary(resp); want == "" {
						want = s
					} else if s != want {
						t.Errorf("stream=%v differs from the walk", stream)
					}
				}
			}
		}
	})
}

// A match longer than the window: match_text is the part within it.
func TestLongMatchTextIsCut(t *testing.T) {
	root := t.TempDir()
	write(t, root, "m.txt", "ab"+strings.Repeat("x", 20000)+"\n")
	eachBackend(t, func(t *testing.T, be string) {
		resp := search(t, be, root, `{"pattern":"x+"}`)
		if resp.Count != 1 {
			t.Fatalf("count %d", resp.Count)
		}
		m := resp.Matches[0]
		if m.Column != 3 || m.TextOffset != 0 || !m.MatchTextTruncated || len(m.MatchText) != DefaultMaxLineBytes-2 ||
			len(m.Submatches) != 1 || m.Submatches[0] != (Span{2, DefaultMaxLineBytes}) {
			t.Errorf("column %d offset %d match_text %d bytes (cut %v) submatches %v", m.Column, m.TextOffset, len(m.MatchText), m.MatchTextTruncated, m.Submatches)
		}
		if !strings.Contains(string(m.AppendJSON(nil)), `"match_text_truncated":true`) {
			t.Error("no match_text_truncated in JSON")
		}
	})
}

// The cap comes from [tools.search] max_line_bytes.
func TestMaxLineBytesConfigured(t *testing.T) {
	root, _ := longLineTree(t)
	eachBackend(t, func(t *testing.T, be string) {
		req, _ := DecodeRequest([]byte(`{"pattern":"NEEDLE"}`))
		opts := DefaultOptions(root)
		opts.Backend = be
		opts.Search.MaxLineBytes = 100
		resp, err := Run(context.Background(), req, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Matches[0].Line) > 100 || len(resp.Matches[0].Line) < 96 || !resp.Matches[0].Cut() {
			t.Errorf("a 100-byte cap kept %d bytes", len(resp.Matches[0].Line))
		}
		opts.Search.MaxLineBytes = 1 << 20 // every line whole
		resp, err = Run(context.Background(), req, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Matches[0].Cut() || strings.Contains(string(resp.AppendJSON(nil)), "truncated\":{") {
			t.Errorf("a cap over the line's length cut it")
		}
	})
}

// BenchmarkLongLines is issue 18's hostile case: 31 files, each one line
// of about 2 MB of "a", searched for "aaaa". It reports the JSON output's
// size (json-bytes/op) beside time and allocations; peak RSS of the whole
// command is measured by bench/longlines.sh.
func BenchmarkLongLines(b *testing.B) {
	root := b.TempDir()
	line := strings.Repeat("a", 1_999_999) + "\n"
	for i := range 31 {
		if err := os.WriteFile(filepath.Join(root, "f"+strconv.Itoa(i)+".txt"), []byte(line), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, be := range []string{"ugrep", "rg"} {
		for _, stream := range []bool{false, true} {
			name := be + "/walk"
			if stream {
				name = be + "/ordered"
			}
			b.Run(name, func(b *testing.B) {
				opts := DefaultOptions(root)
				opts.Backend = be
				if _, err := selectBackend(opts); err != nil {
					if os.Getenv("CI") == "true" {
						b.Fatal(err)
					}
					b.Skip(err)
				}
				req, _ := DecodeRequest([]byte(`{"pattern":"aaaa","timeout_ms":600000}`))
				var emit func(Batch)
				if stream {
					emit = func(Batch) {}
				}
				var out []byte
				for b.Loop() {
					resp, err := Run(context.Background(), req, opts, emit)
					if err != nil || resp.Count != 31 || resp.TimedOut {
						b.Fatalf("%v: count %d timed out %v", err, resp.Count, resp.TimedOut)
					}
					out = resp.AppendJSON(out[:0])
				}
				b.ReportMetric(float64(len(out)), "json-bytes/op")
				var check map[string]any
				if err := json.Unmarshal(out, &check); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// The JSON writes every character safetext would escape as a JSON escape:
// the same strings once decoded, and nothing that could steer a terminal
// showing the JSON.
func TestJSONEscapesHiddenCharacters(t *testing.T) {
	in := "a\x7fb\u0085c\u202ed\u200be\u2028f\U000e0041g\u00a0h\x1bi\tj\"k\\lé日"
	b := appendString(nil, in)
	var back string
	if err := json.Unmarshal(b, &back); err != nil || back != in {
		t.Fatalf("%s does not decode to the input: %q %v", b, back, err)
	}
	want := `"a\u007fb\u0085c\u202ed\u200be\u2028f\udb40\udc41g\u00a0h\u001bi\tj\"k\\lé日"`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// A window starting among invalid bytes is not moved back over them: each
// is a character of its own, and moving back pulled the window's end in
// front of a match at the line's end, which then was not in its own text.
func TestLineWindowKeepsAMatchAtTheEndAfterInvalidBytes(t *testing.T) {
	line := []byte("\xffé\x80😀\x80a\xff日😀\xffa😀é😀😀日é\xff\x80😀é日😀a\x80\xff\xff😀é😀\x80é😀a\xff😀日")
	first := len(line) - len("日")
	lo, hi := lineWindow(line, first, 79)
	if first < lo || first >= hi {
		t.Errorf("window [%d,%d) of %d bytes leaves out the match at %d", lo, hi, len(line), first)
	}
	if hi-lo > 79 {
		t.Errorf("window [%d,%d) is longer than 79 bytes", lo, hi)
	}
}
