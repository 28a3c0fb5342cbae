package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/audit/index"
)

// TestAuditVerifyHoldsTheVerifiedPrefix (issue 36, item 10): once the
// Audit screen verified the log, a cut below that prefix — the real file
// truncated, its head rewritten to match — fails `vigil audit verify`
// (exit 1, a plain message) at every run, until `vigil audit seal`
// records it; then the sealed log verifies.
func TestAuditVerifyHoldsTheVerifiedPrefix(t *testing.T) {
	home, _ := auditHome(t, 9)
	path := filepath.Join(home, "audit.log")
	if _, errs, code := run(t, home, "keys", "init"); code != 0 {
		t.Fatalf("keys init: %s", errs)
	}
	// what the Audit screen does on a start
	if v := index.Verify(context.Background(), path, nil, new(atomic.Int64)); v.Err != nil || v.Anchor != nil || v.Chain.Len() != 9 {
		t.Fatalf("the screen's verification: %+v", v)
	}
	if rec := audit.LoadVerified(path); rec == nil || rec.Entries != 9 {
		t.Fatalf("no verified prefix recorded: %+v", rec)
	}
	lines := auditLines(t, home)
	if err := os.Truncate(path, int64(len(bytes.Join(lines[:5], nil)))); err != nil {
		t.Fatal(err)
	}
	var last audit.Entry
	json.Unmarshal(lines[4], &last)
	hb, _ := json.Marshal(map[string]any{"seq": last.Seq, "hash": last.Hash})
	os.WriteFile(audit.HeadPath(path), hb, 0o600)
	if out, _, code := run(t, home, "audit", "verify", "--local-checkpoints=false"); code != 0 {
		t.Fatalf("setup: the cut log alone should verify: %d %s", code, out)
	}
	for i := 0; i < 2; i++ {
		out, errs, code := run(t, home, "audit", "verify")
		if code != ExitCheck || !strings.HasPrefix(out, "BROKEN at #5: truncated (the log has 5 entries, but 9 verified before (audit.log.verified)") {
			t.Fatalf("run %d after the cut: exit %d %q %s", i, code, out, errs)
		}
		// the screen's own start agrees, and leaves the record as it was
		if v := index.Verify(context.Background(), path, nil, new(atomic.Int64)); v.Anchor == nil || v.Anchor.Reason != audit.ReasonTruncated {
			t.Fatalf("the screen's start after the cut: %+v", v.Anchor)
		}
	}
	out, _, code := run(t, home, "audit", "verify", "--json")
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != ExitCheck || rep["checkpoint"] != "audit.log.verified" || rep["index"] != 5.0 {
		t.Fatalf("--json: %d %s", code, out)
	}
	if out, errs, code := run(t, home, "audit", "seal", "--reason", "entries 5-8 cut"); code != 0 || !strings.Contains(out, "sealed at #5") {
		t.Fatalf("seal: %d %s %s", code, out, errs)
	}
	if out, errs, code := run(t, home, "audit", "verify"); code != 0 || !strings.HasPrefix(out, "chain verified · 6 entries") {
		t.Fatalf("after the seal: %d %s %s", code, out, errs)
	}
}
