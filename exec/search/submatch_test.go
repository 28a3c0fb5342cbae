package search

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// A minified file is one long line with a match every few bytes. Each
// backend, walking or on the ordered path, keeps the line's first
// maxSubmatches spans and says there were more; a line under the cap is
// whole and unflagged. The long line must not make the walks hand over
// (their cap on held spans counts only kept ones).
func TestSubmatchesCappedPerLine(t *testing.T) {
	root := t.TempDir()
	const long = 1_500_000 // "ab" 750,000 times: 750,000 matches of "a"
	write(t, root, "dist/bundle.min.js", strings.Repeat("ab", long/2)+"\nxa a\n")
	write(t, root, "exact.txt", strings.Repeat("a", maxSubmatches)+"\n")
	req := `{"pattern":"a","max_file_size_bytes":2000000}`
	_, answered, viaRun := walksVsOrdered(t, root, req)
	for _, be := range backends(t) {
		if !answered[be] {
			t.Errorf("%s: the walk handed the long line over", be)
		}
		r := viaRun[be]
		if len(r.Matches) != 3 {
			t.Fatalf("%s: %d events", be, len(r.Matches))
		}
		big, short, exact := r.Matches[0], r.Matches[1], r.Matches[2]
		if len(big.Submatches) != maxSubmatches || !big.SubmatchesTruncated || big.Column != 1 || big.MatchText != "a" {
			t.Errorf("%s: long line kept %d spans, truncated %v, column %d", be, len(big.Submatches), big.SubmatchesTruncated, big.Column)
		}
		if last := big.Submatches[len(big.Submatches)-1]; last != (Span{2 * (maxSubmatches - 1), 2*(maxSubmatches-1) + 1}) {
			t.Errorf("%s: last kept span %v", be, last)
		}
		if len(short.Submatches) != 2 || short.SubmatchesTruncated || short.Column != 2 {
			t.Errorf("%s: short line %+v", be, short)
		}
		// Exactly at the cap: nothing was dropped, so no flag.
		if exact.Path != "exact.txt" || len(exact.Submatches) != maxSubmatches || exact.SubmatchesTruncated {
			t.Errorf("%s: a line of exactly maxSubmatches matches: %d spans, truncated %v", be, len(exact.Submatches), exact.SubmatchesTruncated)
		}
		out := r.AppendJSON(nil)
		if n := bytes.Count(out, []byte(`"submatches_truncated":true`)); n != 1 || bytes.Contains(out, []byte(`"submatches_truncated":false`)) {
			t.Errorf("%s: the JSON flags %d lines", be, n)
		}
	}
}

// cutRGMatch over real rg output: below the point where the first
// maxSubmatches+1 spans are complete it declines; from there on it gives a
// message that parses to the same record as the whole line, cut at an
// object boundary.
func TestCutRGMatchOverRgOutput(t *testing.T) {
	backends(t) // fails under CI when rg is missing
	root := t.TempDir()
	write(t, root, "min.js", "x"+strings.Repeat(`"a\`, 2*maxSubmatches)+"\n")
	cmd := exec.Command("rg", "--json", "--no-config", "-a", "-s", "-e", `a`, "--", "./min.js")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var full []byte
	for _, l := range bytes.Split(out, []byte("\n")) {
		if bytes.HasPrefix(l, rgMatchPrefix) {
			full = l
		}
	}
	var pb parseBuf
	whole, ok, err := parseRGLineBuf(full, &pb)
	if !ok || err != nil || len(whole.spans) != maxSubmatches+1 {
		t.Fatalf("whole line: ok %v err %v, %d spans", ok, err, len(whole.spans))
	}
	want := fmt.Sprintf("%q %d %v", whole.text, whole.line, whole.spans)
	// Every 37th prefix, and every one just before the first cut.
	var sizes []int
	fine := false
	for n := 0; n <= len(full); n += 37 {
		if _, ok := cutRGMatch(full[:n]); ok && !fine {
			for k := max(n-36, 0); k < n; k++ {
				sizes = append(sizes, k)
			}
			fine = true
		}
		sizes = append(sizes, n)
	}
	first := -1 // the shortest prefix that is cut
	for _, n := range sizes {
		cut, ok := cutRGMatch(full[:n])
		if !ok {
			if first >= 0 {
				t.Fatalf("declined a %d-byte prefix after cutting a %d-byte one", n, first)
			}
			continue
		}
		if first < 0 {
			first = n
			if string(cut) != string(full[:n])+"]}}" || full[n] != ',' {
				t.Fatalf("first cut at %d is not at an object boundary: ...%q", n, full[max(n-20, 0):n+1])
			}
		}
		var pb parseBuf
		rec, ok, err := parseRGLineBuf(cut, &pb)
		if !ok || err != nil {
			t.Fatalf("cut at %d does not parse: %v", n, err)
		}
		if got := fmt.Sprintf("%q %d %v", rec.text, rec.line, rec.spans); got != want {
			t.Fatalf("cut at %d reads differently", n)
		}
	}
	if first < 0 {
		t.Fatal("never cut")
	}
	// A match rg gives as base64 (not UTF-8) is cut alike; a shape that
	// is not rg's is read whole.
	b64 := bytes.Replace(full, []byte(`{"match":{"text":"a"}`), []byte(`{"match":{"bytes":"YQ=="}`), 1)
	if cut, ok := cutRGMatch(b64); !ok {
		t.Error("did not cut a message with a base64 match")
	} else if rec, ok, err := parseRGLineBuf(cut, &pb); !ok || err != nil || fmt.Sprintf("%q %d %v", rec.text, rec.line, rec.spans) != want {
		t.Errorf("the cut base64 message reads differently: ok %v err %v", ok, err)
	}
	other := bytes.Replace(full, []byte(`[{"match":{`), []byte(`[{"start":0,"match":{`), 1) // keys in another order
	if bytes.Equal(other, full) {
		t.Fatal("the test's replacement found nothing")
	}
	if _, ok := cutRGMatch(other); ok {
		t.Error("cut a message of another shape")
	}
}

// The ordered rg path holds the text of a minified line and a thousand
// spans, not its whole JSON message (about 45 bytes per match).
func TestMinifiedLineMemoryOrderedRG(t *testing.T) {
	backends(t)
	root := t.TempDir()
	write(t, root, "bundle.min.js", strings.Repeat("a", 1_900_000)+"\n")
	req, _ := DecodeRequest([]byte(`{"pattern":"a","include_glob":["*.js"]}`)) // include: the ordered path
	opts := DefaultOptions(root)
	opts.Backend = "rg"
	var resp Response
	peak := peakHeap(func() { resp, _ = Run(context.Background(), req, opts, func(Batch) {}) })
	t.Logf("peak %d MB", peak>>20)
	if len(resp.Matches) != 1 || len(resp.Matches[0].Submatches) != maxSubmatches || !resp.Matches[0].SubmatchesTruncated {
		t.Fatalf("%d events", len(resp.Matches))
	}
	if peak > 32<<20 {
		t.Errorf("peak heap %d MB for one 1.9 MB line (its JSON message is about 85 MB)", peak>>20)
	}
}
