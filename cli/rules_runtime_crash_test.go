package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/rules"
	"github.com/vigil-dev/vigil/internal/testbin"
	"github.com/vigil-dev/vigil/internal/testwait"
)

// ruleLog is what the audit log says about one runtime rule.
type ruleLog struct{ added, revoked, expired int }

// checkRuleInvariants, after a command that recovered the store: the
// chain verifies; each rule has at most one rule_added and at most one
// ending entry, never an ending without its add; no rule is left mid-way
// (adding or ending); a rule is in the store, active, exactly when the log
// says it was added and has not ended. It returns the log's view.
func checkRuleInvariants(t *testing.T, h *crashHome, label string) map[string]*ruleLog {
	t.Helper()
	logPath := filepath.Join(h.home, "audit.log")
	if rep, err := audit.Verify(logPath); err != nil || !rep.OK {
		t.Fatalf("%s: audit verify: %v %s", label, err, rep)
	}
	logs := map[string]*ruleLog{}
	audit.Scan(logPath, 0, func(l audit.Line) bool {
		id, ok := strings.CutPrefix(l.Entry.Target, "rule:")
		if !ok {
			return true
		}
		rl := logs[id]
		if rl == nil {
			rl = &ruleLog{}
			logs[id] = rl
		}
		switch l.Entry.Event {
		case audit.EventRuleAdded:
			rl.added++
		case audit.EventRuleRevoked:
			rl.revoked++
		case audit.EventRuleExpired:
			rl.expired++
		}
		return true
	})
	files := map[string]rules.Stored{}
	ents, _ := os.ReadDir(filepath.Join(h.home, "rules"))
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(h.home, "rules", e.Name()))
		var st rules.Stored
		if err == nil {
			err = json.Unmarshal(b, &st)
		}
		if err != nil {
			t.Fatalf("%s: %s: %v", label, e.Name(), err)
		}
		if st.State != rules.StateActive || st.LogFrom != nil {
			t.Fatalf("%s: %s left %s after recovery", label, id, st.State)
		}
		files[id] = st
	}
	for id, rl := range logs {
		ended := rl.revoked + rl.expired
		switch {
		case rl.added != 1:
			t.Fatalf("%s: %s has %d rule_added entries", label, id, rl.added)
		case ended > 1:
			t.Fatalf("%s: %s has %d ending entries (%+v)", label, id, ended, rl)
		case ended == 0 && files[id].ID == "":
			t.Fatalf("%s: %s was added and never ended, but is not in the store", label, id)
		case ended == 1 && files[id].ID != "":
			t.Fatalf("%s: %s ended but is still in the store", label, id)
		}
	}
	for id := range files {
		if logs[id] == nil {
			t.Fatalf("%s: %s is in the store without a rule_added entry", label, id)
		}
	}
	return logs
}

// onlyRule is the one rule id the log names that is not in seen.
func onlyRule(t *testing.T, logs map[string]*ruleLog, seen map[string]bool) string {
	t.Helper()
	var id string
	for k := range logs {
		if !seen[k] {
			if id != "" {
				t.Fatalf("more than one new rule: %v", logs)
			}
			id = k
		}
	}
	if id != "" {
		seen[id] = true
	}
	return id
}

// TestRulesStoreCrashAtEveryDurableWrite kills a real `vigil rules add`,
// `rules revoke` and the sweep of `rules list` after each durable write
// of the store (internal/crashpoint), lets the next command recover, and
// checks the invariants; then two processes sweep the same expired rules
// at once and each expiry is audited once.
func TestRulesStoreCrashAtEveryDurableWrite(t *testing.T) {
	testbin.FullRunOnly(t, "kills vigil at each of the store's crash points")
	h := newCrashHome(t, testbin.Vigil(t))
	seen := map[string]bool{}
	add := []string{"rules", "add", "--decision", "deny", "--cap", "MEDIA_STOP", "--for", "1h", "--reason", "crash test"}
	kill := func(point string, args ...string) {
		t.Helper()
		out, err := h.child(point, args...).CombinedOutput()
		if !killed(err) {
			t.Fatalf("%s: vigil %s was not killed: %v\n%s", point, strings.Join(args, " "), err, out)
		}
	}
	for _, p := range []string{"rules.add.file", "rules.add.audit", "rules.add.done"} {
		kill(p, add...)
		h.must(0, "rules", "list", "--json") // recovers
		logs := checkRuleInvariants(t, h, p)
		id := onlyRule(t, logs, seen)
		switch {
		case p == "rules.add.file" && id != "":
			t.Fatalf("%s: the add never reached the log, yet rule %s exists", p, id)
		case p != "rules.add.file" && (id == "" || logs[id].added != 1):
			t.Fatalf("%s: the add reached the log, but the rule is gone: %v", p, logs)
		}
	}
	for _, p := range []string{"rules.revoke.file", "rules.revoke.audit", "rules.revoke.done"} {
		h.must(0, add...)
		id := onlyRule(t, checkRuleInvariants(t, h, p+" added"), seen)
		kill(p, "rules", "revoke", id, "--reason", "crash test")
		h.must(0, "rules", "list", "--json")
		if rl := checkRuleInvariants(t, h, p)[id]; rl.revoked != 1 {
			t.Fatalf("%s: %s: %+v", p, id, rl)
		}
		h.must(2, "rules", "revoke", id, "--reason", "again") // ended: nothing to revoke
	}
	short := []string{"rules", "add", "--decision", "deny", "--cap", "MEDIA_STOP", "--for", "1s", "--reason", "crash test"}
	for _, p := range []string{"rules.expire.file", "rules.expire.audit", "rules.expire.done"} {
		h.must(0, short...)
		id := onlyRule(t, checkRuleInvariants(t, h, p+" added"), seen)
		h.pastExpiry(id)
		kill(p, "rules", "list")
		h.must(0, "rules", "list", "--json")
		if rl := checkRuleInvariants(t, h, p)[id]; rl.expired != 1 {
			t.Fatalf("%s: %s: %+v", p, id, rl)
		}
	}
	// two processes sweeping the same expired rules at once
	var five []string
	for range 5 {
		h.must(0, short...)
		five = append(five, onlyRule(t, checkRuleInvariants(t, h, "five"), seen))
	}
	h.pastExpiry(five[len(five)-1])
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := h.child("", "rules", "list").CombinedOutput(); err != nil {
				errs[i] = &childError{err, out}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	logs := checkRuleInvariants(t, h, "two sweepers")
	for _, id := range five {
		if rl := logs[id]; rl.expired != 1 {
			t.Fatalf("%s: %+v", id, rl)
		}
	}
	h.must(0, "audit", "verify")
}

// pastExpiry waits until rule id's expiry, read from its file, has passed
// on the real clock the children read.
func (h *crashHome) pastExpiry(id string) {
	h.t.Helper()
	b, err := os.ReadFile(filepath.Join(h.home, "rules", id+".json"))
	var st rules.Stored
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err != nil {
		h.t.Fatalf("%s: %v", id, err)
	}
	testwait.Until(h.t, 10*time.Second, id+"'s expiry", func() bool { return time.Now().After(st.ExpiresAt) })
}

type childError struct {
	err error
	out []byte
}

func (e *childError) Error() string { return e.err.Error() + "\n" + string(e.out) }

// TestRulesUntilServeRestarts: a rule bound to a running `vigil serve`
// ends, audited, when serve stops, and when serve is killed (found gone by
// the next command).
func TestRulesUntilServeRestarts(t *testing.T) {
	testbin.FullRunOnly(t, "runs vigil serve")
	h := newCrashHome(t, testbin.Vigil(t))
	log, err := audit.Open(filepath.Join(h.home, "audit.log"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	s, err := rules.OpenStore(filepath.Join(h.home, "rules"), log, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	req := rules.AddRequest{Decision: rules.Deny, Capabilities: []string{"MEDIA_STOP"}, UntilRestart: true,
		Reason: "tonight", Actor: rules.Actor{By: "operator:test", Via: "tui"}}
	if _, err := s.Add(req, nil); err == nil {
		t.Fatal("a rule until restart was added with no serve running")
	}
	listed := func(id string) bool {
		var list []ruleJSON
		json.Unmarshal([]byte(h.must(0, "rules", "list", "--json")), &list)
		for _, r := range list {
			if r.ID == id {
				return r.UntilRestart
			}
		}
		return false
	}
	expiredWhy := func(id string) string {
		why := ""
		audit.Scan(filepath.Join(h.home, "audit.log"), 0, func(l audit.Line) bool {
			if l.Entry.Event == audit.EventRuleExpired && l.Entry.Target == "rule:"+id {
				var d map[string]any
				json.Unmarshal(l.Entry.Details, &d)
				why, _ = d["reason"].(string)
			}
			return true
		})
		return why
	}
	for _, c := range []struct {
		stop func(sc *servedChild)
		want string
	}{
		{func(sc *servedChild) { sc.stop(t) }, "Vigil stopped"},
		{func(sc *servedChild) { sc.cmd.Process.Kill(); sc.wait(t) }, "Vigil stopped (its process, pid"},
	} {
		sc := h.startServe()
		st, err := s.Add(req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !listed(st.ID) {
			t.Fatalf("%s is not listed as until restart", st.ID)
		}
		c.stop(sc)
		if listed(st.ID) {
			t.Fatalf("%s outlived serve", st.ID)
		}
		if why := expiredWhy(st.ID); !strings.HasPrefix(why, c.want) {
			t.Fatalf("%s ended with %q, want %q", st.ID, why, c.want)
		}
	}
	h.must(0, "audit", "verify")
}
