// Command queuegen fills a Vigil home for bench/queue.sh:
//
//	queuegen finished HOME N    N finished (done) MEDIA_PLAY tasks, as the queue stores them
//	queuegen manifests HOME PREFIX N OUTDIR   N signed MEDIA_PLAY manifests, PREFIX-000000…
//
// HOME must have its keys (`vigil keys init`) and a sim device
// "living-room". Finished tasks are written directly — manifest.json, a done
// record.json, a signed result and the three audit entries each (submitted,
// approved, executed), chained and hashed as audit.Append would — because
// making 100,000 through the queue costs ten fsyncs each. The leases,
// manifests, request hashes and result signatures are real; the plan and
// preview hashes of these tasks are derived from the task id (nothing reads
// a finished task's plan). The audit log is written in one stream and its
// head set once, so the result verifies with `vigil audit verify`.
package main

import (
	"bufio"
	"crypto"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gowebpki/jcs"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/task"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "queuegen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	switch {
	case len(args) == 3 && args[0] == "finished":
		n, err := strconv.Atoi(args[2])
		if err != nil || n < 0 {
			return fmt.Errorf("N: must be a count, got %q", args[2])
		}
		return finished(args[1], n)
	case len(args) == 5 && args[0] == "manifests":
		n, err := strconv.Atoi(args[3])
		if err != nil || n < 0 {
			return fmt.Errorf("N: must be a count, got %q", args[3])
		}
		return manifests(args[1], args[2], n, args[4])
	}
	return fmt.Errorf("usage: queuegen finished HOME N | queuegen manifests HOME PREFIX N OUTDIR")
}

func manifest(key crypto.Signer, id string) ([]byte, error) {
	tok, err := lease.Issue(key, lease.IssueOptions{Subject: "agent:bench", TaskID: id, Caps: []string{"MEDIA_PLAY"},
		TTL: 12 * time.Hour})
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"task_id": id, "capability_id": "MEDIA_PLAY", "lease": tok,
		"inputs": map[string]any{"media_uri": "/media/" + id + ".mkv", "target_device": "living-room"}})
}

func manifests(home, prefix string, n int, out string) error {
	key, _, err := lease.LoadPrivateKey(filepath.Join(home, "keys", lease.IssuerKeyFile))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return err
	}
	for i := range n {
		id := fmt.Sprintf("%s-%06d", prefix, i)
		b, err := manifest(key, id)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, id+".json"), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// chain writes audit entries as audit.Append seals them.
type chain struct {
	w    *bufio.Writer
	f    *os.File
	seq  int64
	prev string
	size int64
}

func (c *chain) add(e audit.Entry, details map[string]any) (audit.Entry, int64, error) {
	raw, _ := json.Marshal(details)
	canon, err := jcs.Transform(raw)
	if err != nil {
		return e, 0, err
	}
	e.Seq, e.Prev, e.Details = c.seq, c.prev, canon
	if e.Hash, err = e.ComputeHash(); err != nil {
		return e, 0, err
	}
	line, err := e.Line()
	if err != nil {
		return e, 0, err
	}
	off := c.size
	c.w.Write(line)
	c.w.WriteByte('\n')
	c.size += int64(len(line)) + 1
	c.seq, c.prev = c.seq+1, e.Hash
	return e, off, nil
}

// openChain continues the home's audit log (empty or not).
func openChain(path string) (*chain, error) {
	c := &chain{prev: audit.Genesis}
	lines, end, err := audit.ReadTail(path, 1)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	if len(lines) == 1 {
		if lines[0].Err != nil {
			return nil, fmt.Errorf("%s: its last line is not an entry", path)
		}
		c.seq, c.prev = lines[0].Entry.Seq+1, lines[0].Entry.Hash
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(end, 0); err != nil {
		return nil, err
	}
	c.f, c.w, c.size = f, bufio.NewWriterSize(f, 1<<20), end
	return c, nil
}

func (c *chain) close(headPath string) error {
	if err := c.w.Flush(); err != nil {
		return err
	}
	if err := c.f.Truncate(c.size); err != nil {
		return err
	}
	if err := c.f.Sync(); err != nil {
		return err
	}
	if err := c.f.Close(); err != nil {
		return err
	}
	// the head audit.Append keeps: the last entry and the log's size after it
	h, _ := json.Marshal(map[string]any{"seq": c.seq - 1, "hash": c.prev, "size": c.size})
	return os.WriteFile(headPath, h, 0o600)
}

// one is a finished task's parts that the audit chain and the record share.
type one struct {
	id, rh, manifestHash string
	seq, off             int64
}

// parallel runs fn(i) for i in [0, n) on a few goroutines and returns the
// first error: the files are independent, and the disk is the bottleneck.
func parallel(n int, fn func(i int) error) error {
	const workers = 8
	errs := make(chan error, workers)
	next := make(chan int)
	go func() {
		for i := range n {
			next <- i
		}
		close(next)
	}()
	for range workers {
		go func() {
			var first error
			for i := range next {
				if first == nil {
					first = fn(i)
				}
			}
			errs <- first
		}()
	}
	var first error
	for range workers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func finished(home string, n int) error {
	key, _, err := lease.LoadPrivateKey(filepath.Join(home, "keys", lease.IssuerKeyFile))
	if err != nil {
		return err
	}
	signer, err := task.LoadSigner(filepath.Join(home, "keys", lease.OperatorKeyFile))
	if err != nil {
		return err
	}
	results, err := task.OpenStore(filepath.Join(home, "results"))
	if err != nil {
		return err
	}
	t0 := time.Now().UTC().Add(-time.Duration(n+60) * time.Second).Truncate(time.Second)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	tasks := make([]one, n)
	// manifests and signed results, in parallel
	if err := parallel(n, func(i int) error {
		id := fmt.Sprintf("done-%06d", i)
		raw, err := manifest(key, id)
		if err != nil {
			return err
		}
		m, err := task.ParseManifest(raw)
		if err != nil {
			return err
		}
		stored, _ := json.Marshal(m) // the queue stores the manifest re-encoded
		rh, err := m.RequestHash()
		if err != nil {
			return err
		}
		tasks[i] = one{id: id, rh: rh, manifestHash: sha(stored)}
		res := &task.Result{TaskID: id, CapabilityID: "MEDIA_PLAY", Status: task.StatusSuccess,
			Output: json.RawMessage(`{"state":"playing"}`), ExecutedAt: task.FormatTime(at(i).Add(time.Second)), RequestHash: rh}
		if err := signer.Sign(res); err != nil {
			return err
		}
		rb, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(results.Path(id), append(rb, '\n'), 0o600); err != nil {
			return err
		}
		dir := filepath.Join(home, "tasks", id)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, "manifest.json"), stored, 0o600)
	}); err != nil {
		return err
	}
	// the audit log, in order
	logPath := filepath.Join(home, "audit.log")
	c, err := openChain(logPath)
	if err != nil {
		return err
	}
	for i := range tasks {
		t := &tasks[i]
		ts := at(i).Format(time.RFC3339)
		base := audit.Entry{Time: ts, TaskID: t.id, Capability: "MEDIA_PLAY", Target: "living-room", TokenJTI: "jti-" + t.id, Success: true}
		sub := base
		sub.Actor, sub.Event = "agent:bench", audit.EventSubmitted
		se, soff, err := c.add(sub, map[string]any{"source": "cli", "approval_deadline": at(i).Add(10 * time.Minute).Format(time.RFC3339),
			"plan_hash": sha([]byte("plan " + t.id)), "manifest_hash": t.manifestHash, "request_hash": t.rh})
		if err != nil {
			return err
		}
		t.seq, t.off = se.Seq, soff
		ap := base
		ap.Actor, ap.Event = "operator:bench", audit.EventApproved
		if _, _, err := c.add(ap, map[string]any{"preview_hash": sha([]byte("preview " + t.id)), "plan_hash": sha([]byte("plan " + t.id)), "via": "cli"}); err != nil {
			return err
		}
		ex := base
		ex.Actor, ex.Event = "vigil", audit.EventExecuted
		if _, _, err := c.add(ex, map[string]any{"status": task.StatusSuccess, "output": map[string]any{"state": "playing"}, "reconciled": false}); err != nil {
			return err
		}
	}
	if err := c.close(audit.HeadPath(logPath)); err != nil {
		return err
	}
	// the records, in parallel
	return parallel(n, func(i int) error {
		t := tasks[i]
		start, done := at(i), at(i).Add(time.Second)
		rec := approval.Record{TaskID: t.id, CapabilityID: "MEDIA_PLAY", State: approval.Done, Agent: "agent:bench",
			TokenJTI: "jti-" + t.id, Caps: []string{"MEDIA_PLAY"}, Device: "living-room", Source: "cli", SubmittedAt: start,
			ExpiresAt: start.Add(10 * time.Minute), RequestHash: t.rh, DecidedAt: &start, DecidedBy: "operator:bench",
			DecidedVia: "cli", PreviewHash: sha([]byte("preview " + t.id)), PlanHash: sha([]byte("plan " + t.id)),
			ManifestHash: t.manifestHash, SubmittedSeq: &t.seq, SubmittedOffset: &t.off, FinishedAt: &done}
		b, _ := json.MarshalIndent(rec, "", "  ")
		return os.WriteFile(filepath.Join(home, "tasks", t.id, "record.json"), append(b, '\n'), 0o600)
	})
}
