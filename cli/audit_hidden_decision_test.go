package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A decision cut from the log and the cut sealed: the seal stays visible
// in every verify, and the checkpoint written after the approval (in
// audit.checkpoints) fails against the sealed log, naming the seal.
func TestSealCannotHideACutDecision(t *testing.T) {
	h := newCLIHome(t)
	h.must(0, "submit", h.manifest("hidden", "1h"))
	h.must(0, "approve", "hidden", "--yes")
	cps := filepath.Join(h.home, "audit.checkpoints")
	if b, err := os.ReadFile(cps); err != nil || len(b) == 0 {
		t.Fatalf("no checkpoint after the approval: %v", err)
	}
	copyOf := filepath.Join(t.TempDir(), "kept.checkpoints")
	b, _ := os.ReadFile(cps)
	os.WriteFile(copyOf, b, 0o600)
	path := filepath.Join(h.home, "audit.log")
	raw, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(raw, []byte("\n"))
	var kept [][]byte
	for _, l := range lines {
		if !bytes.Contains(l, []byte(`"event":"approved"`)) && !bytes.Contains(l, []byte(`"event":"executed"`)) {
			kept = append(kept, l)
		}
	}
	os.WriteFile(path, bytes.Join(kept, nil), 0o600)
	out := h.must(0, "audit", "seal", "--reason", "lost")
	if !strings.Contains(out, "sealed at #") {
		t.Fatalf("seal: %s", out)
	}
	if out := h.must(0, "audit", "verify"); !strings.Contains(out, "sealed gap at #") {
		t.Fatalf("verify does not show the seal: %s", out)
	}
	for _, c := range []string{cps, copyOf} {
		out, _, code := runReal(t, h.home, "audit", "verify", "--checkpoint", c)
		if code != 1 || !strings.Contains(out, "BROKEN") || !strings.Contains(out, "seal at #") {
			t.Fatalf("verify --checkpoint %s: exit %d\n%s", c, code, out)
		}
	}
}
