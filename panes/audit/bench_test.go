package auditpane

import (
	"bytes"
	"context"
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
	"github.com/vigil-dev/vigil/audit/index"
	"github.com/vigil-dev/vigil/audit/index/indextest"
	"github.com/vigil-dev/vigil/themes"
)

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
		indextest.WriteValidLog(b, bigPath, 1_000_000)
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
		p.Update(p.readTail()())
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
		if ix := index.Scan(context.Background(), path, 0, nil, nil, -1); ix.Err != nil || len(ix.Offs) != 1_000_000 {
			b.Fatalf("%d lines, %v", len(ix.Offs), ix.Err)
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
	check := func(b *testing.B, v index.Verification) {
		if v.Err != nil || v.Chain.Len() != 1_000_000 || v.Chain.Bad() != nil || v.Anchor != nil {
			b.Fatalf("chain: %v %v %v", v.Err, v.Chain.Bad(), v.Anchor)
		}
	}
	b.Run("fresh", func(b *testing.B) {
		cpu := time.Duration(0)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			os.Remove(audit.VerifiedPath(path))
			cpu -= cpuTime()
			b.StartTimer()
			v := index.Verify(context.Background(), path, nil, &atomic.Int64{})
			b.StopTimer()
			cpu += cpuTime()
			check(b, v)
			if v.Resumed != 0 {
				b.Fatalf("resumed %d bytes without a record", v.Resumed)
			}
			b.StartTimer()
		}
		b.StopTimer()
		b.ReportMetric(float64(cpu)/float64(b.N)/1e6, "cpu-ms/op")
		b.ReportMetric(peakRSSMB(), "peakRSSMB")
	})
	b.Run("restart", func(b *testing.B) {
		check(b, index.Verify(context.Background(), path, nil, &atomic.Int64{})) // the start before
		b.ResetTimer()
		c0 := cpuTime()
		for i := 0; i < b.N; i++ {
			v := index.Verify(context.Background(), path, nil, &atomic.Int64{})
			check(b, v)
			if v.Resumed != v.End {
				b.Fatalf("a restart resumed %d of %d bytes", v.Resumed, v.End)
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
	p.table.gen++
	runSync(p, p.Update(indexMsg{gen: p.table.gen, Scanned: index.Scan(context.Background(), path, 0, nil, nil, -1)}))
	for _, c := range []struct {
		name     string
		verified int64
	}{{"verified", 1_000_000}, {"unverified", 0}} {
		b.Run(c.name, func(b *testing.B) {
			p.ver.good.Store(c.verified)
			p.filter.field.SetValue("task-0123456")
			before := heapInuseMB()
			b.ResetTimer()
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				runSync(p, p.refilter())
				if p.filter.passing || len(p.filter.view) != 4 {
					b.Fatalf("%d matches", len(p.filter.view))
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
		if p.ver.chain.Len() != 1_000_000 || p.ver.broken() != nil || len(p.table.offs) != 1_000_000 {
			b.Fatalf("badge %q, %d lines", p.Report(), len(p.table.offs))
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
	indextest.WriteValidLog(b, path, 10000)
	raw, _ := os.ReadFile(path)
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	for _, verified := range []bool{true, false} {
		b.Run(map[bool]string{true: "verified", false: "unverified"}[verified], func(b *testing.B) {
			lf := index.NewLineFilter(index.Filter{Text: "task-0000123"})
			kept := 0
			for i := 0; b.Loop(); i++ {
				if lf.Keeps(lines[i%len(lines)], verified) {
					kept++
				}
			}
			if kept == 0 && b.N > len(lines) {
				b.Fatal("nothing kept")
			}
		})
	}
}
