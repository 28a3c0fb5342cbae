package search

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// goSrc is the Go tree's src folder, asked of the go command (runtime.GOROOT
// is deprecated: it names the build machine's tree).
func goSrc(b testing.TB) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Fatalf("go env GOROOT: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "src")
}

func benchSearch(b *testing.B, be, reqJSON string) {
	root := goSrc(b)
	req, err := DecodeRequest([]byte(reqJSON))
	if err != nil {
		b.Fatal(err)
	}
	opts := DefaultOptions(root)
	opts.Backend = be
	opts.Search.MaxFiles = 0
	for b.Loop() {
		r, err := Run(context.Background(), req, opts, nil)
		if err != nil {
			b.Fatal(err)
		}
		_ = r.WriteJSON(io.Discard)
	}
}

func BenchmarkSelective(b *testing.B) {
	for _, be := range []string{"rg", "ugrep"} {
		b.Run(be, func(b *testing.B) { benchSearch(b, be, `{"pattern":"func \\w+Context\\(","case":"sensitive"}`) })
	}
}

func BenchmarkDenseDefault(b *testing.B) {
	for _, be := range []string{"rg", "ugrep"} {
		b.Run(be, func(b *testing.B) { benchSearch(b, be, `{"pattern":"err","case":"sensitive"}`) })
	}
}

func BenchmarkDenseAll(b *testing.B) {
	for _, be := range []string{"rg", "ugrep"} {
		b.Run(be, func(b *testing.B) {
			benchSearch(b, be, `{"pattern":"err","case":"sensitive","max_results":1000000}`)
		})
	}
}

// captured runs a backend once over GOROOT/src and returns its raw output
// lines, so the parsers can be measured alone.
func captured(b *testing.B, args ...string) [][]byte {
	out, err := exec.Command(args[0], args[1:]...).Output()
	if len(out) == 0 {
		if os.Getenv("CI") == "true" {
			b.Fatalf("%v: %v (the backend is required under CI)", args, err)
		}
		b.Skipf("%v: %v", args, err)
	}
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		lines = append(lines, bytes.Clone(sc.Bytes()))
	}
	b.SetBytes(int64(len(out)))
	return lines
}

func BenchmarkParseRG(b *testing.B) {
	lines := captured(b, "rg", "--json", "err", goSrc(b))
	b.ResetTimer()
	for b.Loop() {
		for _, l := range lines {
			_, _, _ = parseRGLine(l)
		}
	}
}

func BenchmarkParseUgrep(b *testing.B) {
	lines := captured(b, "ugrep", "-r", "-a", "-u", "-H", "--tabs=1", "--format="+ugrepFormat, "err", goSrc(b))
	b.ResetTimer()
	for b.Loop() {
		for _, l := range lines {
			_, _ = parseUgrepLine(l)
		}
	}
}

var _ = os.Getenv

// BenchmarkVsRaw times Vigil and the raw `rg --json` command it is judged
// against (issue 3, Speed) alternately in the same run, so that machine load
// hits both alike, and reports the median wall times and their ratio.
func BenchmarkVsRaw(b *testing.B) {
	cases := []struct {
		name, req string
		raw       []string
	}{
		{"selective", `{"pattern":"func \\w+Context\\(","case":"sensitive"}`, []string{"--json", `func \w+Context\(`}},
		{"dense-default", `{"pattern":"err","case":"sensitive"}`, []string{"--json", "--sort", "path", "err"}},
		{"dense-all", `{"pattern":"err","case":"sensitive","max_results":1000000}`, []string{"--json", "err"}},
	}
	root := goSrc(b)
	for _, be := range []string{"rg", "ugrep"} {
		for _, c := range cases {
			b.Run(be+"/"+c.name, func(b *testing.B) {
				req, err := DecodeRequest([]byte(c.req))
				if err != nil {
					b.Fatal(err)
				}
				opts := DefaultOptions(root)
				opts.Backend = be
				opts.Search.MaxFiles = 0
				var raws, vigils, rawCPU, vigilCPU []time.Duration
				for b.Loop() {
					t0 := time.Now()
					cmd := exec.Command("rg", c.raw...)
					cmd.Dir = root
					out, err := cmd.StdoutPipe()
					if err != nil {
						b.Fatal(err)
					}
					if err := cmd.Start(); err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, out)
					_ = cmd.Wait()
					raws = append(raws, time.Since(t0))
					rawCPU = append(rawCPU, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
					c0 := cpuTime()
					t0 = time.Now()
					r, err := Run(context.Background(), req, opts, nil)
					if err != nil {
						b.Fatal(err)
					}
					_ = r.WriteJSON(io.Discard) // what `vigil search` prints
					vigils = append(vigils, time.Since(t0))
					vigilCPU = append(vigilCPU, cpuTime()-c0)
				}
				mr, mv := median(raws), median(vigils)
				b.ReportMetric(float64(mr.Milliseconds()), "raw-ms")
				b.ReportMetric(float64(mv.Milliseconds()), "vigil-ms")
				b.ReportMetric(float64(mv)/float64(mr), "ratio")
				b.ReportMetric(float64(median(vigilCPU))/float64(median(rawCPU)), "cpu-ratio")
				b.ReportMetric(float64(median(rawCPU).Milliseconds()), "raw-cpu-ms")
				b.ReportMetric(float64(median(vigilCPU).Milliseconds()), "vigil-cpu-ms")
			})
		}
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// cpuTime is the CPU time used so far by this process and its waited-for
// children (the backends).
func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}
