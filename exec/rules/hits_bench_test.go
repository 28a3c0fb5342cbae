package rules

import (
	"context"
	"os"

	"github.com/vigil-dev/vigil/audit"
	"testing"
)

// BenchmarkHits: counting each rule's decisions over an audit log (set
// VIGIL_HITS_LOG to one, e.g. bench/genaudit's million entries).
func BenchmarkHits(b *testing.B) {
	p := os.Getenv("VIGIL_HITS_LOG")
	if p == "" {
		b.Skip("VIGIL_HITS_LOG names no log")
	}
	for b.Loop() {
		if _, err := Hits(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScanQueryDenied(b *testing.B) {
	p := os.Getenv("VIGIL_HITS_LOG")
	if p == "" {
		b.Skip("VIGIL_HITS_LOG names no log")
	}
	for b.Loop() {
		audit.ScanQuery(context.Background(), p, 0, audit.Query{Event: "denied"}, func(audit.Line) bool { return true })
	}
}
