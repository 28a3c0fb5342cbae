package approval_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A search task is audited, so with the audit log's end altered it does not
// run and leaves no stored result for a repeat to hand out unaudited: the
// check comes before the work, as a decision's does.
func TestSearchRefusedBeforeRunningOnDamagedLog(t *testing.T) {
	env := scopeEnv(t)
	env.Submit(env.Play("first", "/media/movie.mkv")) // an entry to alter
	b, _ := os.ReadFile(env.AuditPath())
	i := bytes.LastIndex(b[:len(b)-1], []byte("\n")) + 1
	os.WriteFile(env.AuditPath(), append(b[:i:i], bytes.Replace(b[i:], []byte(`"submitted"`), []byte(`"submittex"`), 1)...), 0o600)
	raw := env.Manifest("find-x", "SEARCH_EMAILS", searchInputs("budget", "archive", 10), time.Hour)
	out, err := env.Queue.Submit(context.Background(), raw, "cli")
	if err == nil && out.Result != nil {
		t.Errorf("a search ran with the audit log damaged: %+v", out)
	}
	if _, err := os.Lstat(filepath.Join(env.Dir, "results", "find-x.json")); err == nil {
		t.Errorf("a search result was stored with the audit log damaged")
	}
}

// A media submission on a log that cannot take its submitted entry leaves
// nothing behind: no manifest, no index marker, no record.
func TestSubmitRefusedBeforeWritingOnDamagedLog(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("first"))
	b, _ := os.ReadFile(h.AuditPath())
	i := bytes.LastIndex(b[:len(b)-1], []byte("\n")) + 1
	os.WriteFile(h.AuditPath(), append(b[:i:i], bytes.Replace(b[i:], []byte(`"submitted"`), []byte(`"submittex"`), 1)...), 0o600)
	if _, err := h.q.Submit(context.Background(), h.play("second"), "cli"); err == nil {
		t.Errorf("submitted with the audit log damaged")
	}
	for _, p := range []string{h.taskFile("second", "manifest.json"), h.taskFile("second", "record.json"),
		filepath.Join(h.TasksDir(), ".index", "open", "second")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s written with the audit log damaged", p)
		}
	}
}
