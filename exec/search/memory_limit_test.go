package search

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// A pattern whose automaton outgrows memory is BadArgs on both backends:
// rg refuses a regex that compiles to over 100 MB, and ugrep, which has no
// limit of its own (`\w{0,1000}` took 3 GB in 14 s, and the kernel killed
// ugrep processes at 24 GB), runs under limitMemory. For ugrep the limit is
// lowered so that the test takes well under a second, and a plain search
// still runs under it (rg, which needs more to find out that the regex is
// too large, keeps the default).
func TestPatternTooLargeForMemoryIsBadArgs(t *testing.T) {
	old := backendMemoryBase
	t.Cleanup(func() { backendMemoryBase = old })
	root := t.TempDir()
	write(t, root, "f.txt", "one two\n")
	for _, be := range backends(t) {
		backendMemoryBase = old
		if be == "ugrep" {
			backendMemoryBase = 64 << 20
		}
		for _, stream := range []bool{false, true} {
			r := searchStream(t, be, root, `{"pattern":"two","case":"sensitive"}`, stream)
			if got := joinSpaces(lineSpans(r)); got != "1:4-7" {
				t.Errorf("%s stream=%v: a plain search under the limit gave %q, want 1:4-7", be, stream, got)
			}
		}
		_, err := searchErr(be, root, `{"pattern":"\\w{0,1000}","case":"sensitive"}`)
		var te *ToolError
		if !errors.As(err, &te) || te.Kind != "BadArgs" || !strings.Contains(te.Message, "pattern: ") {
			t.Fatalf("%s: err %v, want BadArgs naming the pattern", be, err)
		}
		if be == "ugrep" && !strings.Contains(te.Message, "memory limit of 71 MiB") {
			t.Errorf("ugrep: %q does not say it ran out of its memory limit", te.Message)
		}
	}
}

// memoryLimit overflows for a large max_file_size_bytes: the config only
// checks that it is positive, and a "no limit" setting such as
// 9223372036854775807 gives 4*max = -4 (wrapped), so the limit is 2 GiB - 4
// bytes, under the base itself; 1<<62 wraps 4*max to 0 (limit 2 GiB for
// files of any size); other values wrap negative, i.e. no limit at all once
// converted to uint64.
// Fix: saturate, e.g. if maxFileSize > (math.MaxInt64-backendMemoryBase)/4
// return math.MaxInt64 (or RLIM_INFINITY).
func TestMemoryLimitDoesNotOverflow(t *testing.T) {
	for _, size := range []int64{1 << 61, 1 << 62, math.MaxInt64 / 2, math.MaxInt64} {
		got := memoryLimit(size)
		if got < backendMemoryBase || got < size {
			t.Errorf("memoryLimit(%d) = %d, below the base %d or the file size itself", size, got, backendMemoryBase)
		}
	}
}
