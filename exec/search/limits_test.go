package search

import (
	"context"
	"math"
	"path/filepath"
	"testing"
)

// Fixed finding. readRegularInto computes its read limit as
// min(size+64 KiB, maxSize+1) in int64: with max_file_size_bytes at
// math.MaxInt64 (a positive value the config accepts, "no limit") maxSize+1
// wraps to MinInt64, the read loop never runs and the file reads as empty
// without an error. Every ugrep match then fails resolveLines ("file
// changed while it was searched", no events, exit_code 1), and rg's
// context lines are wrong (line 1 shown as "", line 3 missing).
func TestMaxFileSizeMaxInt64ReadsNothing(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "before\nfoo\nafter\n")
	data, err := readRegularInto(filepath.Join(root, "a.txt"), nil, math.MaxInt64)
	if err != nil || string(data) != "before\nfoo\nafter\n" {
		t.Errorf("readRegularInto(maxSize=MaxInt64) = %q, %v; want the whole file", data, err)
	}
	eachBackend(t, func(t *testing.T, be string) {
		for _, req := range []string{`{"pattern":"foo"}`, `{"pattern":"foo","context":1}`} {
			want := responseSummary(search(t, be, root, req))
			rq, err := DecodeRequest([]byte(req))
			if err != nil {
				t.Fatal(err)
			}
			opts := DefaultOptions(root)
			opts.Backend = be
			opts.Search.MaxFileSizeBytes = math.MaxInt64
			r, err := Run(context.Background(), rq, opts, nil)
			if err != nil {
				t.Fatalf("%s %s: %v", be, req, err)
			}
			if got := responseSummary(r); got != want {
				t.Errorf("%s %s with max_file_size_bytes=MaxInt64 (default cap -, huge cap +):\n%s", be, req, lineDiff(want, got))
			}
		}
	})
}

// Fixed finding (new with lineCap). effective.lineCap returns
// maxResults+1, which wraps to MinInt64 when [tools.search]
// default_max_results is math.MaxInt64 (config only checks > 0; only the
// request's max_results is capped at 10,000,000). backendArgs now always
// passes rg "-m <lineCap>", so rg gets "-m -9223372036854775808": the
// ordered path's pattern check fails and every streaming rg search (the
// Search pane) is BadArgs "invalid regular expression". Before the change
// -m was only passed for max_matches_per_file.
func TestDefaultMaxResultsMaxInt64LineCap(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "before\nfoo\nafter\n")
	opts := DefaultOptions(root)
	opts.Search.DefaultMaxResults = math.MaxInt64
	rq, _ := DecodeRequest([]byte(`{"pattern":"foo"}`))
	p, err := prepareUnchecked(rq, opts)
	if err != nil {
		t.Fatal(err)
	}
	if c := p.e.lineCap(); c < 1 {
		t.Errorf("lineCap() = %d with default_max_results=MaxInt64", c)
	}
	eachBackend(t, func(t *testing.T, be string) {
		opts.Backend = be
		r, err := Run(context.Background(), rq, opts, func(Batch) {}) // streaming: the ordered path
		if err != nil {
			t.Fatalf("%s: streaming search failed: %v", be, err)
		}
		if r.Count != 1 {
			t.Errorf("%s: %s", be, responseSummary(r))
		}
	})
}

// Fixed finding (older code reached by the same config). With
// default_max_results = math.MaxInt64 and context lines, runWalk's
// sequential branch does make([]Event, 0, min(size, p.e.maxResults+1)):
// the capacity wraps negative and Run panics ("makeslice: cap out of
// range") instead of answering. Same root cause and fix as lineCap.
func TestDefaultMaxResultsMaxInt64RGWalkPanics(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "before\nfoo\nafter\n")
	opts := DefaultOptions(root)
	opts.Backend = "rg"
	opts.Search.DefaultMaxResults = math.MaxInt64
	backends(t)
	rq, _ := DecodeRequest([]byte(`{"pattern":"foo","context":1}`))
	func() {
		defer func() {
			if x := recover(); x != nil {
				t.Errorf("Run panicked: %v", x)
			}
		}()
		r, err := Run(context.Background(), rq, opts, nil)
		if err != nil {
			t.Errorf("Run: %v", err)
		} else if r.Count != 3 {
			t.Errorf("%s", responseSummary(r))
		}
	}()
}
