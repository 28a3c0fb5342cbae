package scope

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/config"
)

// Benchmark corpora are generated once into the system temp dir and reused
// across runs (they take seconds to write); the version in the name changes
// whenever the generator does.
func benchFile(b *testing.B, name string, gen func(w *bufio.Writer)) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), "vigil-scope-bench")
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	f, err := os.CreateTemp(dir, name+".tmp*")
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	gen(w)
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		b.Fatal(err)
	}
	return path
}

// genMbox writes 100,000 messages: plain, quoted-printable, base64 and
// multipart in turn; every 100th mentions "zanzibar" in its body.
func genMbox(w *bufio.Writer) {
	start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 100_000; i++ {
		// Dates are not in file order, so the sort has work to do.
		t := start.Add(time.Duration((i*7919)%100_000) * time.Minute)
		body := fmt.Sprintf("Hello team,\n\nStatus update number %d. The build is green and the release notes are drafted.\nNothing else to report today; see you at the stand-up.\n", i)
		if i%100 == 0 {
			body += "Travel plan: zanzibar in March.\n"
		}
		fmt.Fprintf(w, "From user%d@example.org %s\n", i%500, t.Format("Mon Jan _2 15:04:05 2006"))
		fmt.Fprintf(w, "From: User %d <user%d@example.org>\nTo: Team <team@example.org>\nSubject: Status %d\nDate: %s\nMessage-ID: <m%d@example.org>\nMIME-Version: 1.0\n",
			i%500, i%500, i, t.Format(time.RFC1123Z), i)
		switch i % 4 {
		case 0:
			fmt.Fprintf(w, "Content-Type: text/plain; charset=utf-8\n\n%s", body)
		case 1:
			fmt.Fprintf(w, "Content-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable\n\nCaf=E9 note. %s", body)
		case 2:
			fmt.Fprintf(w, "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n%s\n", base64.StdEncoding.EncodeToString([]byte(body)))
		case 3:
			fmt.Fprintf(w, "Content-Type: multipart/alternative; boundary=b%d\n\n--b%d\nContent-Type: text/plain; charset=utf-8\n\n%s--b%d\nContent-Type: text/html; charset=utf-8\n\n<p>%s</p>\n--b%d--\n", i, i, body, i, body, i)
		}
		w.WriteString("\n")
	}
}

// genCSV writes 1,000,000 rows with integer ids in a scrambled order; every
// 1,000th row's note mentions "zanzibar".
func genCSV(w *bufio.Writer) {
	w.WriteString("id,name,email,city,note\n")
	cities := []string{"London", "Málaga", "Αθήνα", "Portland", "Zürich"}
	for i := 0; i < 1_000_000; i++ {
		id := (i * 7919) % 1_000_000
		note := "regular customer, \"\"gold\"\" tier"
		if i%1000 == 0 {
			note = "moved to zanzibar"
		}
		fmt.Fprintf(w, "%d,Person %d,p%d@example.org,%s,\"%s\"\n", id, i, i, cities[i%len(cities)], note)
	}
}

// peakHeap samples the live heap every millisecond until stop is called.
func peakHeap() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-tk.C:
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak }
}

func benchScope(b *testing.B, sc config.ScopeConfig, query string, wantCount int) {
	runtime.GC()
	stop := peakHeap()
	var accounted int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := newRun(context.Background(), Query{Text: query, MaxResults: 1000}, Limits{}.withDefaults())
		var err error
		switch sc.Kind {
		case KindEmails:
			err = searchEmails(r, sc)
		case KindDataset:
			err = searchDataset(r, sc)
		}
		if err != nil {
			b.Fatal(err)
		}
		if r.count != wantCount {
			b.Fatalf("count %d, want %d", r.count, wantCount)
		}
		r.finish()
		accounted = max(accounted, r.mem.peak)
	}
	b.StopTimer()
	b.ReportMetric(float64(stop())/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(accounted)/(1<<20), "accounted-peak-MB")
}

func BenchmarkMbox100k(b *testing.B) {
	path := benchFile(b, "mbox-100k-v1.mbox", genMbox)
	sc := config.ScopeConfig{Name: "bench", Kind: KindEmails, Path: path}
	b.Run("rare", func(b *testing.B) { benchScope(b, sc, "zanzibar", 1000) })
	b.Run("every", func(b *testing.B) { benchScope(b, sc, "team@example.org", 100_000) })
}

func BenchmarkCSV1M(b *testing.B) {
	path := benchFile(b, "csv-1m-v2.csv", genCSV)
	sc := config.ScopeConfig{Name: "bench", Kind: KindDataset, Path: path, PrimaryKey: "id"}
	b.Run("rare", func(b *testing.B) { benchScope(b, sc, "zanzibar", 1000) })
	b.Run("every", func(b *testing.B) { benchScope(b, sc, "@example.org", 1_000_000) })
}
