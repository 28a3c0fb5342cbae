package cli

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/audit"
)

// demoHome builds a demo home (keys, pending tasks, audit entries).
func demoHome(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, errs, code := run(t, dir, "demo", "--dir", dir, "--no-open"); code != 0 {
		t.Fatalf("demo: exit %d %s", code, errs)
	}
	return dir
}

func auditLines(t *testing.T, home string) [][]byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(home, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
}

// TestAuditDamagedEndRefusesDecisions: the hostile operator deletes
// the last entries; the next decision writes nothing and exits 3 naming the
// index; seal is the one way on, verify then names the sealed gap, and
// decisions go on.
func TestAuditDamagedEndRefusesDecisions(t *testing.T) {
	home := demoHome(t)
	path := filepath.Join(home, "audit.log")
	lines := auditLines(t, home)
	n := len(lines)
	if n < 4 {
		t.Fatalf("demo log has %d entries", n)
	}
	cut := bytes.Join(lines[:n-2], nil)
	if err := os.WriteFile(path, cut, 0o600); err != nil {
		t.Fatal(err)
	}
	_, errs, code := run(t, home, "deny", "demo-play-movie", "--reason", "no")
	want := "cut or altered at #" + itoa(n-2)
	if code != ExitExecution || !strings.Contains(errs, want) {
		t.Fatalf("deny on a cut log: exit %d, stderr %q (want %q)", code, errs, want)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, cut) {
		t.Fatal("a refused decision wrote to the log")
	}
	// fail closed: the refused deny left the task pending, not decided with its entry missing
	if out, _, code := run(t, home, "pending", "--json"); code != 0 || !strings.Contains(out, `"task_id": "demo-play-movie"`) {
		t.Fatalf("after a refused deny the task must still be pending: %d %s", code, out)
	}
	if out, _, code := run(t, home, "audit", "verify"); code != ExitCheck || !strings.Contains(out, "BROKEN at #"+itoa(n-2)) {
		t.Fatalf("verify: %d %s", code, out)
	}

	if _, errs, code := run(t, home, "audit", "seal"); code != ExitBadInput || !strings.Contains(errs, "--reason") {
		t.Fatalf("seal without a reason: %d %s", code, errs)
	}
	out, errs, code := run(t, home, "audit", "seal", "--reason", "power cut; key sk_live_4eC39HqLyjWDarjtT1zdp7dc was on screen")
	if code != 0 || !strings.Contains(out, "sealed at #"+itoa(n-2)) || !strings.Contains(out, "expected "+itoa(n)+" entries") {
		t.Fatalf("seal: exit %d %q %s", code, out, errs)
	}
	if raw, _ := os.ReadFile(path); bytes.Contains(raw, []byte("4eC39HqLyjWDarjtT1zdp7dc")) {
		t.Fatal("the seal's reason was not masked")
	}
	out, _, code = run(t, home, "audit", "verify")
	// the seal's own checkpoint (in audit.checkpoints) holds; the one before the cut is superseded by the seal
	if code != 0 || !strings.HasPrefix(out, "chain verified · "+itoa(n-1)+" entries · extends 1 checkpoint\n") ||
		!strings.Contains(out, "sealed gap at #"+itoa(n-2)+": expected "+itoa(n)+" entries, found "+itoa(n-2)) ||
		!strings.Contains(out, "signature verified") {
		t.Fatalf("verify after seal: %d\n%s", code, out)
	}
	out, _, _ = run(t, home, "audit", "verify", "--json")
	var rep struct {
		OK     bool              `json:"ok"`
		Sealed []audit.SealedGap `json:"sealed"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || !rep.OK || len(rep.Sealed) != 1 || rep.Sealed[0].Index != int64(n-2) {
		t.Fatalf("verify --json after seal: %s %v", out, err)
	}
	if _, errs, code := run(t, home, "deny", "demo-play-movie", "--reason", "no"); code != 0 {
		t.Fatalf("the refused decision, made again after the seal: exit %d %s", code, errs)
	}
	if _, errs, code := run(t, home, "deny", "demo-stream-secret", "--reason", "not now"); code != 0 {
		t.Fatalf("a decision after the seal: exit %d %s", code, errs)
	}
	if _, errs, code := run(t, home, "audit", "seal", "--reason", "again"); code != ExitBadInput || !strings.Contains(errs, "nothing to seal") {
		t.Fatalf("sealing an intact log: %d %s", code, errs)
	}
	if out, _, code := run(t, home, "audit", "show", "--event", "sealed", "--json"); code != 0 || strings.Count(out, "\n") != 1 {
		t.Fatalf("show the seal: %d %s", code, out)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestAuditCheckpointCLI: a checkpoint printed now and kept elsewhere fails
// verification after truncation, rollback, replacement or an edit before it,
// and when signed by another key; the one Vigil wrote at a decision checks too.
func TestAuditCheckpointCLI(t *testing.T) {
	home := demoHome(t)
	path := filepath.Join(home, "audit.log")
	elsewhere := t.TempDir()
	cpFile := filepath.Join(elsewhere, "cp.txt")
	out, errs, code := run(t, home, "audit", "checkpoint")
	if code != 0 || !strings.HasPrefix(out, "vigil-audit/") || !strings.Contains(out, "\n\n— vigil-audit/") {
		t.Fatalf("checkpoint: %d %q %s", code, out, errs)
	}
	os.WriteFile(cpFile, []byte(out), 0o600)
	n := len(auditLines(t, home))
	if out, _, _ := run(t, home, "audit", "checkpoint", "--json"); !strings.Contains(out, `"size": `+itoa(n)) || !strings.Contains(out, `"note": "vigil-audit/`) {
		t.Fatalf("checkpoint --json: %s", out)
	}
	good, _ := os.ReadFile(path)
	goodHead, _ := os.ReadFile(audit.HeadPath(path))
	restore := func() {
		os.WriteFile(path, good, 0o600)
		os.WriteFile(audit.HeadPath(path), goodHead, 0o600)
	}
	if out, errs, code := run(t, home, "audit", "verify", "--checkpoint", cpFile); code != 0 || !strings.Contains(out, "extends 1 checkpoint") {
		t.Fatalf("verify --checkpoint: %d %s %s", code, out, errs)
	}
	// a decision writes audit.checkpoints, which the log extends
	if _, errs, code := run(t, home, "deny", "demo-play-movie", "--reason", "no"); code != 0 {
		t.Fatalf("deny: %d %s", code, errs)
	}
	local := filepath.Join(home, "audit.checkpoints")
	if out, errs, code := run(t, home, "audit", "verify", "--checkpoint", local, "--checkpoint", cpFile); code != 0 || !strings.Contains(out, "extends 2 checkpoints") {
		t.Fatalf("verify against audit.checkpoints: %d %s %s", code, out, errs)
	}
	restore()

	expectFail := func(what, reason string) {
		t.Helper()
		out, errs, code := run(t, home, "audit", "verify", "--checkpoint", cpFile, "--json")
		var rep map[string]any
		if err := json.Unmarshal([]byte(out), &rep); err != nil || code != ExitCheck || rep["ok"] != false || rep["reason"] != reason || rep["checkpoint"] != cpFile {
			t.Fatalf("%s: exit %d %s %s", what, code, out, errs)
		}
		restore()
	}
	// truncation, head made to match (the log alone verifies)
	lines := auditLines(t, home)
	os.WriteFile(path, bytes.Join(lines[:n-2], nil), 0o600)
	var last audit.Entry
	json.Unmarshal(lines[n-3], &last)
	hb, _ := json.Marshal(map[string]any{"seq": last.Seq, "hash": last.Hash})
	os.WriteFile(audit.HeadPath(path), hb, 0o600)
	if _, _, code := run(t, home, "audit", "verify", "--local-checkpoints=false"); code != 0 {
		t.Fatal("setup: the cut log with its head moved should verify on its own")
	}
	// the checkpoint the decision wrote beside the log catches the cut by default
	if out, _, code := run(t, home, "audit", "verify"); code != ExitCheck || !strings.Contains(out, "BROKEN at #"+itoa(n-2)+": truncated") ||
		!strings.Contains(out, "audit.checkpoints (note ") {
		t.Fatalf("verify with the local checkpoints after a cut: %d %s", code, out)
	}
	expectFail("truncation", "truncated")
	// rollback to an older valid copy: the one demo left before the last decision
	os.WriteFile(path, bytes.Join(lines[:1], nil), 0o600)
	json.Unmarshal(lines[0], &last)
	hb, _ = json.Marshal(map[string]any{"seq": last.Seq, "hash": last.Hash})
	os.WriteFile(audit.HeadPath(path), hb, 0o600)
	expectFail("rollback", "truncated")
	// replaced by a fresh chain, longer than the original
	fresh, _ := auditHome(t, n+3)
	freshLog, _ := os.ReadFile(filepath.Join(fresh, "audit.log"))
	freshHead, _ := os.ReadFile(audit.HeadPath(filepath.Join(fresh, "audit.log")))
	os.WriteFile(path, freshLog, 0o600)
	os.WriteFile(audit.HeadPath(path), freshHead, 0o600)
	expectFail("replacement", "replaced")
	// an edit before the checkpoint, chain and head re-made
	rehash(t, path, 1, func(e *audit.Entry) { e.Actor = "someone-else" })
	if _, _, code := run(t, home, "audit", "verify", "--local-checkpoints=false"); code != 0 {
		t.Fatal("setup: the rewritten log should verify on its own")
	}
	expectFail("edit before the checkpoint", "edited")
	// a checkpoint signed by another key
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	forged, _ := audit.SignCheckpoint(audit.Checkpoint{Origin: audit.Origin(entryAt(t, path, 0).Hash), Size: int64(n), Hash: entryAt(t, path, n-1).Hash}, other)
	os.WriteFile(cpFile, forged, 0o600)
	expectFail("another key", "bad-signature")
	// ... which passes with that key's public half given by --key
	der, _ := x509.MarshalPKIXPublicKey(other.Public())
	pubFile := filepath.Join(elsewhere, "other.pub.pem")
	os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600)
	// (restore() rolled the log back past the decision's local checkpoint: that file is not this check's subject)
	if out, errs, code := run(t, home, "audit", "verify", "--checkpoint", cpFile, "--key", pubFile, "--local-checkpoints=false"); code != 0 {
		t.Fatalf("--key: %d %s %s", code, out, errs)
	}
	if _, errs, code := run(t, home, "audit", "verify", "--checkpoint", filepath.Join(elsewhere, "missing")); code != ExitBadInput {
		t.Fatalf("a missing checkpoint file: %d %s", code, errs)
	}
}

func entryAt(t *testing.T, path string, i int) audit.Entry {
	t.Helper()
	raw, _ := os.ReadFile(path)
	var e audit.Entry
	if err := json.Unmarshal(bytes.Split(raw, []byte("\n"))[i], &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// rehash edits entry i and re-makes the chain after it and the head, as a
// careful attacker would.
func rehash(t *testing.T, path string, i int, edit func(*audit.Entry)) {
	t.Helper()
	raw, _ := os.ReadFile(path)
	var out []byte
	prev := audit.Genesis
	var last audit.Entry
	for j, ln := range bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n")) {
		var e audit.Entry
		if err := json.Unmarshal(ln, &e); err != nil {
			t.Fatal(err)
		}
		if j == i {
			edit(&e)
		}
		if j >= i {
			e.Prev = prev
			e.Hash, _ = e.ComputeHash()
		}
		b, _ := e.Line()
		out = append(append(out, b...), '\n')
		prev, last = e.Hash, e
	}
	os.WriteFile(path, out, 0o600)
	hb, _ := json.Marshal(map[string]any{"seq": last.Seq, "hash": last.Hash, "size": len(out)})
	os.WriteFile(audit.HeadPath(path), hb, 0o600)
}
