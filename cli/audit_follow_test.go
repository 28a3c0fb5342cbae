package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/audit"
)

// TestAuditTailCatchUpOnACut: `audit tail` follows through audit.Follower
// with the cut rule it always had: a log shorter than what was printed is an
// error naming both sizes; a log replaced (renamed over) with the printed
// bytes still in place reads on from where the printing stopped; a log
// gone waits for it to come back.
func TestAuditTailCatchUpOnACut(t *testing.T) {
	home, l := auditHome(t, 5)
	path := filepath.Join(home, "audit.log")
	end, err := audit.EndOfCompleteLines(path)
	if err != nil {
		t.Fatal(err)
	}
	f := audit.NewFollower(path, end)
	var got []int64
	emit := func(l audit.Line) error { got = append(got, l.Entry.Seq); return nil }
	appendOne := func() {
		t.Helper()
		if _, err := l.Append(audit.Entry{Actor: "agent-2", Event: audit.EventSearched, TaskID: "live", Success: true}); err != nil {
			t.Fatal(err)
		}
	}

	appendOne()
	if err := catchUp(f, emit); err != nil || len(got) != 1 || got[0] != 5 {
		t.Fatalf("an append: printed %v, %v", got, err)
	}

	// replaced by rename, the printed bytes unchanged, one entry more
	raw, _ := os.ReadFile(path)
	appendOne()
	more, _ := os.ReadFile(path)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, more, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if err := catchUp(f, emit); err != nil || len(got) != 2 || got[1] != 6 {
		t.Fatalf("a replaced log: printed %v, %v", got, err)
	}

	// gone: nothing printed, no error; back: read on
	if err := os.Rename(path, tmp); err != nil {
		t.Fatal(err)
	}
	if err := catchUp(f, emit); err != nil || len(got) != 2 {
		t.Fatalf("a missing log: printed %v, %v", got, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if err := catchUp(f, emit); err != nil || len(got) != 2 {
		t.Fatalf("the log back: printed %v, %v", got, err)
	}

	// cut short
	if err := os.WriteFile(path, raw[:len(raw)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	err = catchUp(f, emit)
	var ee *ExitError
	want := "shrank from " + itoa(len(more)) + " to " + itoa(len(raw)/2) + " bytes while following"
	if !errors.As(err, &ee) || ee.Code != ExitCheck || !strings.Contains(err.Error(), want) {
		t.Fatalf("a cut log: %v, want exit %d and %q", err, ExitCheck, want)
	}
}
