// Command genaudit writes a valid audit log of N entries (default 1,000,000)
// for the audit benchmarks: the bytes Append would write (same encoding,
// same chain, a head beside it), without Append's lock and fsync per entry,
// which would take an hour at this size. Runs are byte-identical: the clock
// and every value are derived from the entry's index.
//
// Usage: go run ./bench/genaudit -n 1000000 -o bench/out/audit/audit.log
//
// Task ids are task-%07d, four entries a task (submitted, approved or denied
// every 50th task, executed, searched), so `--task task-0123456` selects 4
// entries and `--event denied` one in 200.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/vigil-dev/vigil/audit"
)

func main() {
	n := flag.Int("n", 1_000_000, "entries to write")
	out := flag.String("o", "bench/out/audit/audit.log", "the log to write (its head goes beside it)")
	flag.Parse()
	if err := generate(*out, *n); err != nil {
		fmt.Fprintln(os.Stderr, "genaudit:", err)
		os.Exit(1)
	}
}

func generate(path string, n int) error {
	if n < 1 {
		return fmt.Errorf("-n: must be 1 or more, got %d", n)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".partial"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // no-op after the rename
	w := bufio.NewWriterSize(f, 1<<20)
	start := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	prev := audit.Genesis
	var size int64
	var last audit.Entry
	for i := 0; i < n; i++ {
		e := entry(i)
		e.Seq, e.Prev = int64(i), prev
		e.Time = start.Add(time.Duration(i) * time.Second).Format(time.RFC3339)
		if e.Hash, err = e.ComputeHash(); err != nil {
			return err
		}
		line, err := e.Line()
		if err != nil {
			return err
		}
		w.Write(line)
		w.WriteByte('\n')
		size += int64(len(line)) + 1
		prev, last = e.Hash, e
		if i%100_000 == 99_999 {
			fmt.Fprintf(os.Stderr, "genaudit: %d/%d entries\n", i+1, n)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// the head anchor as Append writes it: the last entry and the log's size
	head, _ := json.Marshal(struct {
		Seq  int64  `json:"seq"`
		Hash string `json:"hash"`
		Size int64  `json:"size"`
	}{last.Seq, last.Hash, size})
	if err := os.WriteFile(audit.HeadPath(path)+".partial", head, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return os.Rename(audit.HeadPath(path)+".partial", audit.HeadPath(path))
}

// entry is the i-th entry's content: a task's life in four entries.
func entry(i int) audit.Entry {
	task := fmt.Sprintf("task-%07d", i/4)
	agent := fmt.Sprintf("agent-%d", i%7)
	e := audit.Entry{Actor: agent, TaskID: task, Capability: "media.play", Target: "living-room/speaker",
		TokenJTI: fmt.Sprintf("jti-%016x", uint64(i/4)*0x9e3779b97f4a7c15), Success: true}
	switch i % 4 {
	case 0:
		e.Event = audit.EventSubmitted
		e.Details = details(map[string]any{"title": "Play the evening playlist", "claims": map[string]any{"volume": 30, "source": "library/evening.m3u"}})
	case 1:
		e.Event, e.Actor = audit.EventApproved, "person"
		if (i/4)%50 == 0 {
			e.Event, e.Success, e.ErrorCode = audit.EventDenied, false, "APPROVAL_DENIED"
		}
		e.Details = details(map[string]any{"decided_after_ms": 1200 + i%900})
	case 2:
		e.Event = audit.EventExecuted
		e.ContentHashBefore = fmt.Sprintf("sha256:%064x", i)
		e.ContentHashAfter = fmt.Sprintf("sha256:%064x", i+1)
		e.Details = details(map[string]any{"exit": 0, "duration_ms": 300 + i%500})
	default:
		e.Event, e.Capability, e.Target = audit.EventSearched, "search.files", "/srv/work/projects"
		e.Details = details(map[string]any{"query": "invoice 2026", "matches": i % 40, "backend": "ugrep"})
	}
	return e
}

func details(m map[string]any) json.RawMessage { return audit.Details(m) }
