package auditpane

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/themes"
)

var (
	bigOnce sync.Once
	bigPath string
	bigErr  error
)

// bigLog writes a valid 1,000,000-entry chain once per test binary run.
func bigLog(b *testing.B) string {
	bigOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vigil-audit-bench-")
		if err != nil {
			bigErr = err
			return
		}
		bigPath = filepath.Join(dir, "audit.log")
		f, err := os.Create(bigPath)
		if err != nil {
			bigErr = err
			return
		}
		w := bufio.NewWriterSize(f, 1<<20)
		prev := audit.Genesis
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := 0; i < 1_000_000; i++ {
			e := audit.Entry{Seq: int64(i), Time: t0.Add(time.Duration(i) * time.Second).Format(time.RFC3339),
				Actor: "agent:bench", Event: audit.EventSubmitted, TaskID: fmt.Sprintf("task-%07d", i),
				Capability: "MEDIA_PLAY", Target: "living-room", Success: true, Details: json.RawMessage("{}"), Prev: prev}
			e.Hash, _ = e.ComputeHash()
			line, _ := e.Line()
			w.Write(append(line, '\n'))
			prev = e.Hash
		}
		if err := w.Flush(); err != nil {
			bigErr = err
		}
		f.Close()
	})
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	return bigPath
}

// BenchmarkFirstFrameMillionEntries is the time from opening the Audit pane
// on a 1,000,000-entry log to its first full frame (target: under 300 ms).
func BenchmarkFirstFrameMillionEntries(b *testing.B) {
	path := bigLog(b)
	pal, _ := themes.Palettes("dark")
	st := themes.New(pal)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := New(path, st)
		lines, _, err := audit.ReadTail(path, tailRows)
		if err != nil {
			b.Fatal(err)
		}
		rows := make([]row, len(lines))
		for j, l := range lines {
			rows[j] = newRow(l)
		}
		p.Update(tailMsg{rows: rows})
		if out := p.View(120, 40); len(out) == 0 {
			b.Fatal("empty frame")
		}
	}
}

// BenchmarkFullLoadMillionEntries is the background load that follows:
// reading, verifying and indexing every entry.
func BenchmarkFullLoadMillionEntries(b *testing.B) {
	path := bigLog(b)
	pal, _ := themes.Palettes("dark")
	st := themes.New(pal)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := New(path, st)
		p.LoadSync()
		if p.chain == nil || p.chain.Len() != 1_000_000 || p.chain.Bad() != nil {
			b.Fatalf("chain: %v", p.Report())
		}
	}
}
