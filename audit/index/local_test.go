package index

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/audit"
)

// keyedHome writes a log of n entries (a decision every third) with the
// operator key pair where `vigil keys init` puts it, so Append leaves
// signed checkpoints in audit.checkpoints.
func keyedHome(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	pub, key, _ := ed25519.GenerateKey(rand.Reader)
	os.MkdirAll(filepath.Join(dir, "keys"), 0o700)
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	os.WriteFile(filepath.Join(dir, "keys", "operator.key.pem"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	pder, _ := x509.MarshalPKIXPublicKey(pub)
	os.WriteFile(filepath.Join(dir, "keys", "operator.pub.pem"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pder}), 0o600)
	path := filepath.Join(dir, "audit.log")
	i := 0
	l, err := audit.Open(path, func() time.Time { i++; return time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC) })
	if err != nil {
		t.Fatal(err)
	}
	l.Warn = func(err error) { t.Errorf("checkpoint: %v", err) }
	for j := 0; j < n; j++ {
		ev := audit.EventSubmitted
		if j%3 == 2 {
			ev = audit.EventApproved
		}
		if _, err := l.Append(audit.Entry{Actor: "agent", Event: ev, TaskID: "t", Target: "tv", Success: true}); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestVerifyHoldsTheLocalCheckpoints (issue 36, item 10): the screen's
// verification holds the log to the checkpoints Append wrote beside it, as
// `vigil audit verify` does: a cut with its head rewritten, and no verified
// prefix to prove it (the record deleted too), is BROKEN at every start.
func TestVerifyHoldsTheLocalCheckpoints(t *testing.T) {
	path := keyedHome(t, 12) // decisions at #2, #5, #8, #11
	if v := Verify(context.Background(), path, nil, &atomic.Int64{}); v.Err != nil || v.Anchor != nil || v.Chain.Len() != 12 {
		t.Fatalf("intact log: %+v", v.Anchor)
	}
	raw, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(raw, []byte("\n"))
	kept := bytes.Join(lines[:7], nil)
	var last audit.Entry
	json.Unmarshal(lines[6], &last)
	hb, _ := json.Marshal(map[string]any{"seq": last.Seq, "hash": last.Hash, "size": len(kept)})
	os.Truncate(path, int64(len(kept)))
	os.WriteFile(audit.HeadPath(path), hb, 0o600)
	os.Remove(audit.VerifiedPath(path))
	if rep, _ := audit.Verify(path); !rep.OK {
		t.Fatalf("setup: the cut log alone should verify: %s", rep)
	}
	for start := 1; start <= 2; start++ {
		v := Verify(context.Background(), path, nil, &atomic.Int64{})
		if v.Anchor == nil || v.Anchor.Reason != audit.ReasonTruncated || !strings.Contains(v.Anchor.Checkpoint, "audit.checkpoints") {
			t.Fatalf("start %d after a cut below a checkpoint: %+v", start, v.Anchor)
		}
	}
	// a checkpoint file signed by someone else is named, not trusted
	cp := audit.CheckpointsPath(path)
	b, _ := os.ReadFile(cp)
	os.WriteFile(cp, bytes.Replace(b, []byte("\n— "), []byte("\n— x"), 1), 0o600)
	if v := Verify(context.Background(), path, nil, &atomic.Int64{}); v.Anchor == nil || v.Anchor.Reason != audit.ReasonBadSignature {
		t.Fatalf("a forged checkpoint file: %+v", v.Anchor)
	}
}
