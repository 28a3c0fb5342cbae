package search

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

func goSrc(b *testing.B) string {
	return filepath.Join(runtime.GOROOT(), "src")
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
		_ = r.AppendJSON(nil)
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
