package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/audit"
	. "github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
)

// The audit log's submitted entry is what an edited manifest is checked
// against, so an edit of that entry's hashes in place (the manifest and
// the record edited to match) must not make the edited request pass: the
// entry's own hash and the next entry's link to it are checked, and the
// task is tampered. (Appends only check the log's end, so the break in the
// middle does not stop the decision by itself.)
func TestSubmittedEntryEditedInPlaceIsTampering(t *testing.T) {
	for _, rehash := range []bool{false, true} {
		h := newHarness(t)
		h.submit(h.play("swap"))
		h.submit(h.play("after")) // an entry after the submitted one
		r0, _ := h.q.Get("swap")
		mp := h.taskFile("swap", "manifest.json")
		b, _ := os.ReadFile(mp)
		evil := []byte(strings.Replace(string(b), "/media/movie.mkv", "/media/evil.mkv", 1))
		os.WriteFile(mp, evil, 0o600)
		m, _ := task.ParseManifest(evil)
		rh, _ := m.RequestHash()
		h.editJSON(h.taskFile("swap", "record.json"), func(r map[string]any) {
			r["manifest_hash"], r["request_hash"] = sha(evil), rh
			delete(r, "plan_hash")
		})
		logb, _ := os.ReadFile(h.AuditPath())
		lines := strings.SplitAfter(string(logb), "\n")
		for i, l := range lines {
			if !strings.Contains(l, `"event":"submitted","task_id":"swap"`) {
				continue
			}
			l = strings.Replace(l, r0.ManifestHash, sha(evil), 1)
			l = strings.Replace(l, r0.RequestHash, rh, 1)
			// the plan hash emptied, the line kept at its length (the head records the log's size)
			l = strings.Replace(l, `"plan_hash":"`+r0.PlanHash+`"`, `"plan_hash":""`, 1)
			l = strings.Replace(l, `"actor":"agent:planner"`, `"actor":"agent:planner`+strings.Repeat("x", len(r0.PlanHash))+`"`, 1)
			if rehash {
				var e audit.Entry
				if err := jsonUnmarshal(strings.TrimSpace(l), &e); err != nil {
					t.Fatal(err)
				}
				e.Hash = ""
				e.Hash, _ = e.ComputeHash()
				nb, _ := e.Line()
				l = string(nb) + "\n"
			}
			lines[i] = l
		}
		os.WriteFile(h.AuditPath(), []byte(strings.Join(lines, "")), 0o600)
		_, _, err := h.q.Decide(context.Background(), "swap", Decision{Approve: true, By: "operator:ada"})
		if !errors.Is(err, ErrTampered) {
			t.Errorf("rehash %v: approve after the submitted entry was edited: %v", rehash, err)
		}
		if n := h.runs("evil.mkv"); n != 0 {
			t.Errorf("rehash %v: the edited request reached the device %d times", rehash, n)
		}
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
