package audit

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkAppendFsync: durable appends (flock, tail read, write, fsync,
// head) one after another; reports entries per second.
func BenchmarkAppendFsync(b *testing.B) {
	l, err := Open(filepath.Join(b.TempDir(), "audit.log"), stepClock())
	if err != nil {
		b.Fatal(err)
	}
	e := sampleEntry(1)
	start := time.Now()
	n := 0
	for b.Loop() {
		if _, err := l.Append(e); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "entries/s")
}

// writeBigLog writes n chained entries straight to a file (no fsync, no
// lock), the same bytes Append would write, plus the head anchor.
func writeBigLog(b testing.TB, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "audit.log")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	clock := stepClock()
	prev := Genesis
	details, _ := canonicalDetails(Details(map[string]any{"query": "invoice", "matches": 3}))
	for i := 0; i < n; i++ {
		e := Entry{
			Seq: int64(i), Time: clock().Format(time.RFC3339),
			Actor: "agent-" + strconv.Itoa(i%7), Event: EventSearched,
			TaskID: "task-" + strconv.Itoa(i), Capability: "search.files", Target: "/srv/work",
			TokenJTI: "jti-" + strconv.Itoa(i), Success: true, Details: details, Prev: prev,
		}
		body, err := e.body()
		if err != nil {
			b.Fatal(err)
		}
		sum := sha256.Sum256(body)
		e.Hash = hex.EncodeToString(sum[:])
		// the sealed line is the body with the hash as its last field
		w.Write(body[:len(body)-1])
		w.WriteString(`,"hash":"` + e.Hash + "\"}\n")
		prev = e.Hash
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	hb, _ := json.Marshal(head{Seq: int64(n - 1), Hash: prev})
	if err := os.WriteFile(HeadPath(path), hb, 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkVerify1M: the whole chain of a 1,000,000-entry log.
func BenchmarkVerify1M(b *testing.B) {
	const n = 1_000_000
	path := writeBigLog(b, n)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	for b.Loop() {
		rep, err := Verify(path)
		if err != nil || !rep.OK || rep.Entries != n {
			b.Fatalf("%s %v", rep, err)
		}
	}
}

// BenchmarkReadTail1000On1M: what a viewer pays for its first frame on a
// 1,000,000-entry log: the last 1,000 entries, parsed.
func BenchmarkReadTail1000On1M(b *testing.B) {
	path := writeBigLog(b, 1_000_000)
	for b.Loop() {
		lines, _, err := ReadTail(path, 1000)
		if err != nil || len(lines) != 1000 || lines[999].Entry.Seq != 999_999 || lines[0].Err != nil {
			b.Fatalf("%d lines %v", len(lines), err)
		}
	}
}

// BenchmarkScanTask1M: `vigil audit show --task X` on a 1,000,000-entry log:
// the byte test skips the other tasks' lines (checked for canonical form,
// never decoded) and the few candidates are parsed.
func BenchmarkScanTask1M(b *testing.B) {
	const n = 1_000_000
	path := writeBigLog(b, n)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	q := Query{TaskID: "task-123456"}
	for b.Loop() {
		found := 0
		_, err := ScanQuery(context.Background(), path, 0, q, func(l Line) bool {
			if l.Err != nil {
				b.Fatalf("line at %d: %v", l.Offset, l.Err)
			}
			if q.Match(l.Entry) {
				found++
			}
			return true
		})
		if err != nil || found != 1 {
			b.Fatalf("found %d, %v", found, err)
		}
	}
}

// BenchmarkScanEvent1M: `vigil audit show --event E` on a 1,000,000-entry
// log where every entry has the event: the worst case, each line parsed.
func BenchmarkScanEvent1M(b *testing.B) {
	const n = 1_000_000
	path := writeBigLog(b, n)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	q := Query{Event: EventSearched}
	for b.Loop() {
		found := 0
		_, err := ScanQuery(context.Background(), path, 0, q, func(l Line) bool {
			found++
			return true
		})
		if err != nil || found != n {
			b.Fatalf("found %d, %v", found, err)
		}
	}
}

// BenchmarkVerifyIncrementalResumed1M: a viewer's start on a 1,000,000-entry
// log it verified before, with 1,000 entries appended since: the prefix is
// checked by its SHA-256 alone, the new entries in full.
func BenchmarkVerifyIncrementalResumed1M(b *testing.B) {
	const n = 1_000_000
	path := writeBigLog(b, n)
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	// record the prefix of the first n-1000 entries, as an earlier start would have
	cut := len(data)
	for i := 0; i < 1000; i++ {
		cut = bytes.LastIndexByte(data[:cut-1], '\n') + 1
	}
	prefixPath := filepath.Join(b.TempDir(), "prefix.log")
	if err := os.WriteFile(prefixPath, data[:cut], 0o600); err != nil {
		b.Fatal(err)
	}
	last, err := parseLine(data[bytes.LastIndexByte(data[:cut-1], '\n')+1 : cut-1])
	if err != nil {
		b.Fatal(err)
	}
	hb, _ := json.Marshal(head{Seq: last.Seq, Hash: last.Hash, Size: int64(cut)})
	if err := os.WriteFile(HeadPath(prefixPath), hb, 0o600); err != nil {
		b.Fatal(err)
	}
	cache := filepath.Join(b.TempDir(), "audit.log.verified")
	if v, err := VerifyIncremental(context.Background(), prefixPath, cache, VerifyOptions{}, nil); err != nil || !v.OK || v.SaveErr != nil {
		b.Fatalf("%s %v %v", v.Report, err, v.SaveErr)
	}
	saved, _ := os.ReadFile(cache)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := os.WriteFile(cache, saved, 0o600); err != nil {
			b.Fatal(err)
		}
		v, err := VerifyIncremental(context.Background(), path, cache, VerifyOptions{}, nil)
		if err != nil || !v.OK || v.Entries != n || v.Resumed != int64(cut) {
			b.Fatalf("%s resumed %d: %v", v.Report, v.Resumed, err)
		}
	}
}
