package auditpane

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/themes"
)

// writeValidLog writes a valid chain of n entries (and its head) to path,
// shaped like a busy log: tasks submitted, approved, executed, some denied
// or failed.
func writeValidLog(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	prev := audit.Genesis
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	events := []string{audit.EventSubmitted, audit.EventApproved, audit.EventExecuted, audit.EventDenied}
	var last audit.Entry
	for i := 0; i < n; i++ {
		e := audit.Entry{Seq: int64(i), Time: t0.Add(time.Duration(i) * time.Second).Format(time.RFC3339),
			Actor: "agent:bench", Event: events[i%len(events)], TaskID: fmt.Sprintf("task-%07d", i/len(events)),
			Capability: "MEDIA_PLAY", Target: "living-room", Success: i%len(events) != 3, Details: json.RawMessage("{}"), Prev: prev}
		if !e.Success {
			e.ErrorCode = "APPROVAL_DENIED"
		}
		if e.Hash, err = e.ComputeHash(); err != nil {
			tb.Fatal(err)
		}
		line, _ := e.Line()
		w.Write(append(line, '\n'))
		prev, last = e.Hash, e
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	if n > 0 {
		head, _ := json.Marshal(map[string]any{"seq": last.Seq, "hash": last.Hash, "size": st.Size()})
		if err := os.WriteFile(audit.HeadPath(path), head, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
}

var (
	bigOnce sync.Once
	bigPath string
)

// TestMain removes the benchmarks' log (half a gigabyte) when the run ends.
func TestMain(m *testing.M) {
	code := m.Run()
	if bigPath != "" {
		os.RemoveAll(filepath.Dir(bigPath))
	}
	os.Exit(code)
}

// bigLog is a valid 1,000,000-entry log (≈ 500 MB), written once per test binary run.
func bigLog(b *testing.B) string {
	bigOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vigil-audit-bench-")
		if err != nil {
			b.Fatal(err)
		}
		bigPath = filepath.Join(dir, "audit.log")
		writeValidLog(b, bigPath, 1_000_000)
	})
	if bigPath == "" {
		b.Fatal("no log")
	}
	return bigPath
}

func benchStyles() *themes.Styles {
	pal, _ := themes.Palettes("dark")
	return themes.New(pal)
}

// cpuTime is the test process's CPU time so far (user and system): on a
// shared machine it says what the work costs when wall time cannot.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuMetric reports the CPU time per op since c0.
func cpuMetric(b *testing.B, c0 time.Duration) {
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e6, "cpu-ms/op")
}

// heapInuseMB is the live heap after a collection.
func heapInuseMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapInuse) / (1 << 20)
}

// peakRSSMB is the test process's peak resident size so far (Linux's
// VmHWM): it bounds every benchmark run before it in the same process.
func peakRSSMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return -1
}

// BenchmarkFirstFrameMillionEntries is the time from constructing the pane
// on a 1,000,000-entry log to its first View with rows (target: 50 ms).
func BenchmarkFirstFrameMillionEntries(b *testing.B) {
	path := bigLog(b)
	st := benchStyles()
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		p := New(path, st)
		p.Update(readTail(path)())
		if out := p.View(120, 40); len(out) == 0 || p.viewLen() == 0 {
			b.Fatal("no rows in the first frame")
		}
		p.Close()
	}
	b.StopTimer()
	cpuMetric(b, c0)
	b.ReportMetric(heapInuseMB(), "heapMB")
	b.ReportMetric(peakRSSMB(), "peakRSSMB")
}

// BenchmarkIndexMillionEntries is the byte scan for line starts that lets
// the pane scroll and filter the whole log.
func BenchmarkIndexMillionEntries(b *testing.B) {
	path := bigLog(b)
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if ix := scanIndex(context.Background(), path, 0, nil, nil, -1); ix.err != nil || len(ix.offs) != 1_000_000 {
			b.Fatalf("%d lines, %v", len(ix.offs), ix.err)
		}
	}
	cpuMetric(b, c0)
}

// BenchmarkBadgeMillionEntries is the time until the chain badge settles
// (target: 5 s) on a 1,000,000-entry log: "fresh" is the first verification
// ever (no record beside the log: every entry is checked, streaming);
// "restart" is a start after one that verified the log (the record's prefix
// is checked by its SHA-256 alone).
func BenchmarkBadgeMillionEntries(b *testing.B) {
	path := bigLog(b)
	check := func(b *testing.B, v verified) {
		if v.err != nil || v.chain.Len() != 1_000_000 || v.chain.Bad() != nil || v.anchor != nil {
			b.Fatalf("chain: %v %v %v", v.err, v.chain.Bad(), v.anchor)
		}
	}
	b.Run("fresh", func(b *testing.B) {
		cpu := time.Duration(0)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			os.Remove(audit.VerifiedPath(path))
			cpu -= cpuTime()
			b.StartTimer()
			v := verifyLog(context.Background(), path, nil, &atomic.Int64{})
			b.StopTimer()
			cpu += cpuTime()
			check(b, v)
			if v.resumed != 0 {
				b.Fatalf("resumed %d bytes without a record", v.resumed)
			}
			b.StartTimer()
		}
		b.StopTimer()
		b.ReportMetric(float64(cpu)/float64(b.N)/1e6, "cpu-ms/op")
		b.ReportMetric(peakRSSMB(), "peakRSSMB")
	})
	b.Run("restart", func(b *testing.B) {
		check(b, verifyLog(context.Background(), path, nil, &atomic.Int64{})) // the start before
		b.ResetTimer()
		c0 := cpuTime()
		for i := 0; i < b.N; i++ {
			v := verifyLog(context.Background(), path, nil, &atomic.Int64{})
			check(b, v)
			if v.resumed != v.end {
				b.Fatalf("a restart resumed %d of %d bytes", v.resumed, v.end)
			}
		}
		b.StopTimer()
		cpuMetric(b, c0)
		b.ReportMetric(peakRSSMB(), "peakRSSMB")
	})
}

// BenchmarkFilterMillionEntries is the time from the filter's last key to
// its complete result on a loaded 1,000,000-entry log (target: 0.5 s), with
// the chain verified (the usual case) and before the verification has
// reached the lines (every byte-scan candidate is parsed).
func BenchmarkFilterMillionEntries(b *testing.B) {
	path := bigLog(b)
	p := New(path, benchStyles())
	// the index alone: the generated log is valid (BenchmarkBadgeMillionEntries
	// verifies it), so "verified" is set by hand rather than paid for here
	p.igen++
	runSync(p, p.Update(indexMsg{gen: p.igen, indexed: scanIndex(context.Background(), path, 0, nil, nil, -1)}))
	for _, c := range []struct {
		name     string
		verified int64
	}{{"verified", 1_000_000}, {"unverified", 0}} {
		b.Run(c.name, func(b *testing.B) {
			p.good.Store(c.verified)
			p.filter.SetValue("task-0123456")
			before := heapInuseMB()
			b.ResetTimer()
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				runSync(p, p.refilter())
				if p.passing || len(p.view) != 4 {
					b.Fatalf("%d matches", len(p.view))
				}
			}
			b.StopTimer()
			cpuMetric(b, c0)
			b.ReportMetric(heapInuseMB()-before, "heapGrowthMB")
			b.ReportMetric(peakRSSMB(), "peakRSSMB")
		})
	}
	p.Close()
}

// BenchmarkLoadMillionEntries is the whole background load (index and
// verification, with no verified prefix recorded) and what the pane holds
// afterwards (target: ≤ 100 MB).
func BenchmarkLoadMillionEntries(b *testing.B) {
	path := bigLog(b)
	var p *Pane
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		os.Remove(audit.VerifiedPath(path)) // the first start: a full verification
		b.StartTimer()
		p = New(path, benchStyles())
		p.LoadSync()
		if p.chain.Len() != 1_000_000 || p.broken() != nil || len(p.offs) != 1_000_000 {
			b.Fatalf("badge %q, %d lines", p.Report(), len(p.offs))
		}
	}
	b.StopTimer()
	cpuMetric(b, c0)
	b.ReportMetric(heapInuseMB(), "heapMB") // the pane is still live here
	b.ReportMetric(peakRSSMB(), "peakRSSMB")
	p.Close()
}

// BenchmarkFilterLine is the cost of judging one line of an ordinary log
// for a query that rejects nearly all of them (the filter pass's inner loop).
func BenchmarkFilterLine(b *testing.B) {
	path := filepath.Join(b.TempDir(), "audit.log")
	writeValidLog(b, path, 10000)
	raw, _ := os.ReadFile(path)
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	for _, verified := range []bool{true, false} {
		b.Run(map[bool]string{true: "verified", false: "unverified"}[verified], func(b *testing.B) {
			lf := newLineFilter(filterSpec{query: "task-0000123"})
			kept := 0
			for i := 0; b.Loop(); i++ {
				if lf.keeps(lines[i%len(lines)], verified) {
					kept++
				}
			}
			if kept == 0 && b.N > len(lines) {
				b.Fatal("nothing kept")
			}
		})
	}
}
