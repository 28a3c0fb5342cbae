package search

// Stress and odd inputs found by a review: long lines, many matches on one
// line, odd line shapes, max_results edges, cancellation, concurrency,
// many files, deep paths and memory for small max_results.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"os/exec"

	"github.com/vigil-dev/vigil/internal/testbin"
	"golang.org/x/sys/unix"
)

// A line of 100 KB with 50,000 matches (a minified file). When ugrep
// printed the whole line once per match its output was 50,000 x 100 KB =
// 5 GB and the search ran into its timeout; now each match is a few bytes.
// The 20 s timeout is a margin of hundreds, not a speed target.
func TestManyMatchesOnOneLongLine(t *testing.T) {
	root := t.TempDir()
	write(t, root, "long.txt", strings.Repeat("a ", 50_000)+"\n")
	eachBackend(t, func(t *testing.T, be string) {
		start := time.Now()
		r := search(t, be, root, `{"pattern":"a","max_results":1,"timeout_ms":20000}`)
		t.Logf("%s: %v count=%d truncated=%v timed_out=%v", be, time.Since(start), r.Count, r.Truncated, r.TimedOut)
		if r.TimedOut || r.Count != 1 || r.Truncated {
			t.Errorf("%s: want 1 event (one line), not truncated, not timed out; got count=%d truncated=%v timed_out=%v",
				be, r.Count, r.Truncated, r.TimedOut)
		}
		if r.Count == 1 && (len(r.Matches[0].Submatches) != maxSubmatches || !r.Matches[0].SubmatchesTruncated) {
			t.Errorf("%s: submatches %d (truncated %v), want the first %d of 50,000", be, len(r.Matches[0].Submatches), r.Matches[0].SubmatchesTruncated, maxSubmatches)
		}
	})
}

// Odd line structures: every path and backend must agree.
func TestOddLineShapesAgree(t *testing.T) {
	root := t.TempDir()
	write(t, root, "empty.txt", "")
	write(t, root, "newlines.txt", strings.Repeat("\n", 1000))
	write(t, root, "nonl.txt", "x1\nx2\nfoo end")
	write(t, root, "cr.txt", "foo\rbar\rfoo\n")
	write(t, root, "mid.txt", "a\nb\nfoo\nc\nfoo\nd\ne\nfoo")
	for _, req := range []string{
		`{"pattern":"foo"}`,
		`{"pattern":"foo","context":2}`,
		`{"pattern":"foo","context":1,"max_results":3}`,
		`{"pattern":"^$","context":1,"max_results":50}`,
		`{"pattern":"foo$","context":1}`,
		`{"pattern":"end$"}`,
		`{"pattern":"foo","context":3,"max_matches_per_file":1}`,
	} {
		expectAgree(t, root, req)
	}
}

// A 1 MB and a 20 MB single line (longer than the 256 KiB reader).
func TestVeryLongLines(t *testing.T) {
	root := t.TempDir()
	one := strings.Repeat("x", 1<<20) + "NEEDLE" + strings.Repeat("y", 1000)
	twenty := strings.Repeat("z", 20<<20) + "NEEDLE"
	write(t, root, "one.txt", one+"\n")
	write(t, root, "twenty.txt", twenty) // no trailing newline
	eachBackend(t, func(t *testing.T, be string) {
		req, _ := DecodeRequest([]byte(`{"pattern":"NEEDLE","timeout_ms":20000}`))
		opts := DefaultOptions(root)
		opts.Backend = be
		opts.Search.MaxFileSizeBytes = 64 << 20
		r, err := Run(context.Background(), req, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Count != 2 || r.TimedOut {
			t.Fatalf("%s: count %d timed_out %v errors %v stderr %q", be, r.Count, r.TimedOut, r.Errors, r.Stderr)
		}
		// Each is cut to a window around its match (max_line_bytes).
		for k, whole := range []string{one, twenty} {
			m := r.Matches[k]
			if m.LineBytes != len(whole) || whole[m.TextOffset:m.TextOffset+len(m.Line)] != m.Line ||
				len(m.Line) > DefaultMaxLineBytes || m.Line[m.Submatches[0].Start:m.Submatches[0].End] != "NEEDLE" {
				t.Errorf("%s: line %d: window of %d bytes at %d of %d", be, k, len(m.Line), m.TextOffset, m.LineBytes)
			}
		}
		if r.Matches[1].Column != 20<<20+1 {
			t.Errorf("%s: column %d", be, r.Matches[1].Column)
		}
	})
}

// max_results edge values against the exact number of events, with and
// without context, across paths and backends.
func TestMaxResultsEdges(t *testing.T) {
	root := t.TempDir()
	// a.txt: matches on lines 1, 3, 4, 9 (10 lines); b.txt: 2 matches.
	write(t, root, "a.txt", "foo\n2\nfoo\nfoo\n5\n6\n7\n8\nfoo\n10\n")
	write(t, root, "b.txt", "foo\nx\nfoo\n")
	for _, ctxN := range []int{0, 1, 2} {
		full := search(t, "rg", root, fmt.Sprintf(`{"pattern":"foo","context":%d}`, ctxN))
		n := full.Count
		for _, mr := range []int{1, n - 1, n, n + 1} {
			if mr < 1 {
				continue
			}
			req := fmt.Sprintf(`{"pattern":"foo","context":%d,"max_results":%d}`, ctxN, mr)
			r, _ := runBoth(t, root, req)
			wantTrunc := mr < n
			if r.Truncated != wantTrunc || r.Count != min(mr, n) {
				t.Errorf("%s: count %d truncated %v, want %d %v", req, r.Count, r.Truncated, min(mr, n), wantTrunc)
			}
			if r.FilesScanned < 1 {
				t.Errorf("%s: files_scanned %d", req, r.FilesScanned)
			}
		}
		for _, mpf := range []int{1, 2, 3, 4, 5} {
			req := fmt.Sprintf(`{"pattern":"foo","context":%d,"max_matches_per_file":%d}`, ctxN, mpf)
			r, _ := runBoth(t, root, req)
			if r.FilesScanned != 2 {
				t.Errorf("%s: files_scanned %d, want 2", req, r.FilesScanned)
			}
		}
	}
}

// childPids lists the processes whose parent is this test process.
func childPids() []string {
	self := strconv.Itoa(os.Getpid())
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		k := strings.LastIndexByte(s, ')')
		if k < 0 {
			continue
		}
		f := strings.Fields(s[k+1:])
		if len(f) > 2 && f[1] == self && f[0] != "Z" {
			out = append(out, e.Name()+":"+s[:k+1])
		}
	}
	return out
}

// expectNothingLeft checks that no backend process and, after a grace
// period for goroutines that are returning, no goroutine beyond the
// before count outlives a search.
func expectNothingLeft(t *testing.T, before int) {
	t.Helper()
	if kids := childPids(); len(kids) > 0 {
		t.Errorf("backend processes left: %v", kids)
	}
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines %d > %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

func denseTree(t *testing.T, files, lines int) string {
	root := t.TempDir()
	body := strings.Repeat("foo bar foo\n", lines)
	for i := range files {
		write(t, root, fmt.Sprintf("d%02d/f%05d.txt", i%50, i), body)
	}
	return root
}

// Cancelling from emit after the first batch: Run returns promptly with
// ctx's error, no goroutine or backend process is left.
func TestCancelFromEmit(t *testing.T) {
	root := denseTree(t, 2000, 200)
	eachBackend(t, func(t *testing.T, be string) {
		before := runtime.NumGoroutine()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := DecodeRequest([]byte(`{"pattern":"foo","max_results":1000000}`))
		opts := DefaultOptions(root)
		opts.Backend = be
		batches := 0
		start := time.Now()
		resp, err := Run(ctx, req, opts, func(b Batch) {
			batches++
			if batches == 1 {
				cancel()
			}
		})
		took := time.Since(start)
		t.Logf("%s: took %v batches %d count %d err %v", be, took, batches, resp.Count, err)
		if err != context.Canceled {
			t.Errorf("err %v, want context.Canceled", err)
		}
		expectNothingLeft(t, before)
	})
}

// Cancelling the rg walk (emit == nil) mid-run.
func TestCancelRGWalk(t *testing.T) {
	root := denseTree(t, 2000, 200)
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := DecodeRequest([]byte(`{"pattern":"foo","max_results":10000000}`))
	opts := DefaultOptions(root)
	opts.Backend = "rg"
	testHookRGWalkStarted = cancel
	defer func() { testHookRGWalkStarted = func() {} }()
	start := time.Now()
	resp, err := Run(ctx, req, opts, nil)
	t.Logf("took %v count %d err %v timed_out %v", time.Since(start), resp.Count, err, resp.TimedOut)
	if err != context.Canceled {
		t.Errorf("err %v, want context.Canceled", err)
	}
	expectNothingLeft(t, before)
}

// Concurrent Runs sharing a fresh probe cache file, on both paths.
func TestConcurrentRunsShareProbeCache(t *testing.T) {
	root := denseTree(t, 300, 20)
	cache := filepath.Join(t.TempDir(), "state", "backends.json")
	if err := os.MkdirAll(filepath.Dir(cache), 0o755); err != nil {
		t.Fatal(err)
	}
	detectMu.Lock()
	clear(detectCache) // make every goroutine probe
	detectMu.Unlock()
	var wg sync.WaitGroup
	results := make([]string, 16)
	for i := range 16 {
		wg.Go(func() {
			req, _ := DecodeRequest([]byte(`{"pattern":"bar","max_results":100000}`))
			opts := DefaultOptions(root)
			opts.ProbeCache = cache
			opts.Backend = []string{"rg", "ugrep"}[i%2]
			var emit func(Batch)
			if i%4 < 2 {
				emit = func(Batch) {}
			}
			r, err := Run(context.Background(), req, opts, emit)
			if err != nil {
				results[i] = err.Error()
				return
			}
			results[i] = responseSummary(r)
		})
	}
	wg.Wait()
	for i, r := range results {
		if r != results[0] {
			t.Errorf("run %d differs: %.200s vs %.200s", i, r, results[0])
		}
	}
	if m := readProbeCache(cache); len(m) < 2 {
		t.Errorf("probe cache holds %d entries after concurrent probes, want ugrep and rg", len(m))
	}
}

// 25,000 small files (the byte cap on a chunk is reached): both paths and backends agree, files_scanned exact.
func TestTwentyFiveThousandFiles(t *testing.T) {
	testbin.FullRunOnly(t, "a stress test over 25,000 files")
	root := t.TempDir()
	for d := range 100 {
		dir := filepath.Join(root, fmt.Sprintf("dir%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range 250 {
			body := "nothing\n"
			if f%7 == 0 {
				body = "hit here\n"
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file-with-a-longish-name-%05d.txt", f)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := 100 * ((250 + 6) / 7)
	r, walked := runBoth(t, root, `{"pattern":"hit","max_results":1000000,"timeout_ms":60000}`)
	t.Logf("rg walk answered: %v; count %d files_scanned %d", walked, r.Count, r.FilesScanned)
	if r.Count != want || r.FilesScanned != 25_000 || r.TimedOut {
		t.Errorf("count %d (want %d) files_scanned %d (want 25000) timed_out %v", r.Count, want, r.FilesScanned, r.TimedOut)
	}
}

// Long names (255 bytes) nested until the path passes PATH_MAX, and a
// 500-level deep tree.
func TestLongAndDeepPaths(t *testing.T) {
	root := t.TempDir()
	nestPastPathMax(t, root)
	write(t, root, "deep"+strings.Repeat("/d", 500)+"/leaf.txt", "hit\n")
	for _, req := range []string{`{"pattern":"hit","max_results":1000}`, `{"pattern":"hit","context":1}`} {
		expectAgree(t, root, req)
	}
	// Every file whose path fits PATH_MAX is found (15 nested + the leaf 500
	// levels down); the directory whose path no longer fits is one clear
	// per-path error, on both backends.
	eachBackend(t, func(t *testing.T, be string) {
		r := search(t, be, root, `{"pattern":"hit","max_results":1000}`)
		if r.Count != 16 || len(r.Errors) != 1 || !strings.HasSuffix(r.Errors[0].Error, "file name too long") {
			t.Errorf("%s: count %d files_scanned %d errors %v, want 16 and one \"file name too long\"", be, r.Count, r.FilesScanned, r.Errors)
		}
	})
}

// nestPastPathMax nests 20 directories with 255-byte names in dir, each
// holding f.txt ("hit"), so that the deepest paths pass PATH_MAX: the walk
// meets a directory it cannot read ("file name too long"), also as root.
func nestPastPathMax(t *testing.T, dir string) {
	name := strings.Repeat("n", 253)
	// Nested with openat/mkdirat so the tree goes past PATH_MAX: 20 x 256.
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	dirLen := len(dir)
	for i := range 20 {
		n := fmt.Sprintf("%s%02d", name, i)
		if err := unix.Mkdirat(fd, n, 0o755); err != nil {
			t.Fatal(err)
		}
		nfd, err := unix.Openat(fd, n, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(fd)
		fd = nfd
		dirLen += 1 + len(n)
		ffd, err := unix.Openat(fd, "f.txt", unix.O_WRONLY|unix.O_CREAT, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		unix.Write(ffd, []byte("hit\n"))
		unix.Close(ffd)
	}
	unix.Close(fd)
	t.Cleanup(func() { exec.Command("rm", "-rf", dir).Run() })
	t.Logf("deepest dir length %d", dirLen)
}

// peakHeap runs fn while sampling the heap; it returns the peak HeapAlloc
// above the starting point.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	peak := base
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
		}
	})
	fn()
	close(done)
	wg.Wait()
	return peak - base
}

func linesTree(t *testing.T, files, lines int) string {
	root := t.TempDir()
	body := strings.Repeat("foo\n", lines)
	for i := range files {
		write(t, root, fmt.Sprintf("f%04d.txt", i), body)
	}
	return root
}

// max_results 1 over 200 files of 20,000 matching lines each.
func TestMemoryMaxResultsOne(t *testing.T) {
	root := linesTree(t, 200, 20_000)
	eachBackend(t, func(t *testing.T, be string) {
		req, _ := DecodeRequest([]byte(`{"pattern":"foo","max_results":1}`))
		opts := DefaultOptions(root)
		opts.Backend = be
		var resp Response
		peak := peakHeap(func() { resp, _ = Run(context.Background(), req, opts, func(Batch) {}) })
		t.Logf("%s: peak %d MB for 1 result (count %d truncated %v files_scanned %d)", be, peak>>20, resp.Count, resp.Truncated, resp.FilesScanned)
		if peak > 64<<20 {
			t.Errorf("%s: peak heap %d MB to return one event", be, peak>>20)
		}
	})
}

// ugrep's offsets are checked against the file Vigil reads: a file that
// changed in between (a line number that no longer holds the offset, an
// offset past the end) is refused rather than shown with the wrong line.
func TestResolveLinesRefusesChangedFile(t *testing.T) {
	rec := func(line uint64, off, n int) record { return record{line: line, spans: []span{{off, off + n}}} }
	cases := []struct {
		name string
		data string
		recs []record
		ok   bool
		text string
	}{
		{"same file", "a\nneedle\n", []record{rec(2, 2, 6)}, true, "needle"},
		{"first line grew", "aaa\nneedle\n", []record{rec(2, 2, 6)}, false, ""},
		{"file truncated", "a\n", []record{rec(2, 2, 6)}, false, ""},
		{"offset past the end", "a\nneedle", []record{rec(2, 20, 1)}, false, ""},
		{"two matches on a line", "ab ab\n", []record{rec(1, 0, 2), rec(1, 3, 2)}, true, "ab ab"},
		{"CRLF kept out of the text", "needle\r\n", []record{rec(1, 0, 6)}, true, "needle"},
	}
	for _, c := range cases {
		var f fileRecs
		for _, r := range c.recs {
			f.add(r, 10)
		}
		ok := resolveLines([]byte(c.data), &f)
		if ok != c.ok || (ok && string(f.text) != c.text) {
			t.Errorf("%s: ok %v text %q, want %v %q", c.name, ok, f.text, c.ok, c.text)
		}
		if ok && c.name == "two matches on a line" && !slices.Equal(f.spans, []span{{0, 2}, {3, 5}}) {
			t.Errorf("%s: spans %v", c.name, f.spans)
		}
	}
}

// Deadlines at every point of the ordered path, over a tree of many
// chunks: a chunk handed to the in-order reader but not yet to a worker
// when the deadline passed was never closed, and the drain at the end
// then waited on it for ever (a goroutine left per such Run).
func TestOrderedPathDeadlinesLeaveNothing(t *testing.T) {
	testbin.FullRunOnly(t, "deadlines swept across a real search")
	root := denseTree(t, 3000, 2)
	eachBackend(t, func(t *testing.T, be string) {
		before := runtime.NumGoroutine()
		for k := range 60 {
			req, _ := DecodeRequest([]byte(fmt.Sprintf(`{"pattern":"foo","max_results":1000000,"timeout_ms":%d}`, 1+k%20)))
			opts := DefaultOptions(root)
			opts.Backend = be
			var batches int
			// emit != nil: the ordered path, also with rg.
			resp, err := Run(context.Background(), req, opts, func(Batch) { batches++ })
			if err != nil {
				t.Fatal(err)
			}
			if !resp.TimedOut && resp.Count != 6000 {
				t.Fatalf("neither timed out nor complete: %d events", resp.Count)
			}
		}
		expectNothingLeft(t, before)
	})
}
