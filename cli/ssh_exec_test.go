package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// An operator decides over SSH exec sessions with the real ssh client: the
// commands print what they print locally (JSON byte for byte), approve
// needs the preview hash, every decision is recorded as the operator, via
// ssh, with the key's fingerprint, and nothing else runs.
func TestSSHExecCommandsDecideAsTheOperator(t *testing.T) {
	h := newCLIHome(t)
	keys := h.addOperators("", "ada")
	ada := keys["ada"]
	h.must(0, "submit", h.manifest("play", "1h"))
	h.must(0, "submit", h.manifest("loud", "1h"))
	s := h.serveSSH()

	out, _ := s.must(ada, 0, "pending", "--json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 2 {
		t.Fatalf("pending --json: %v\n%s", err, out)
	}
	if out, _ := s.must(ada, 0, "pending"); !strings.Contains(out, "TASK") || !strings.Contains(out, "play") || !strings.Contains(out, "loud") {
		t.Fatalf("pending:\n%s", out)
	}
	// the same bytes as on the command line
	remote, _ := s.must(ada, 0, "preview", "play", "--json")
	if local := h.must(0, "preview", "play", "--json"); remote != local {
		t.Fatalf("preview --json over SSH differs from the local one:\n%s\n---\n%s", remote, local)
	}
	hash := h.previewJSON("play")["preview_hash"].(string)
	if human, _ := s.must(ada, 0, "preview", "play"); !strings.Contains(human, "preview_hash: "+hash) {
		t.Fatalf("preview:\n%s", human)
	}
	// with a terminal (ssh -t host preview ID) the command runs all the same
	c := s.cmd(ada, []string{"-tt"}, "preview", "play")
	c.Stdin = strings.NewReader("")
	if out, err := c.Output(); err != nil || !strings.Contains(string(out), "preview_hash: "+hash+"\r\n") {
		t.Fatalf("ssh -tt preview: %v\n%q", err, out)
	}

	// approve binds the hash: without one it is refused, a stale one runs nothing
	if _, errs := s.must(ada, 2, "approve", "play"); !strings.Contains(errs, "--expect-preview HASH") {
		t.Fatalf("approve without a hash: %s", errs)
	}
	if _, errs := s.must(ada, 2, "approve", "play", "--yes"); !strings.Contains(errs, "--expect-preview HASH") {
		t.Fatalf("approve --yes without a hash: %s", errs)
	}
	if out, _ := s.must(ada, 1, "approve", "play", "--expect-preview", strings.Repeat("0", 64)); !strings.Contains(out, "EXECUTION_FAILED") {
		t.Fatalf("stale hash: %s", out)
	}
	if h.journal() != "" {
		t.Fatal("a refused approval reached the device")
	}
	if out, _ := s.must(ada, 0, "approve", "play", "--expect-preview", hash); !strings.Contains(out, `"SUCCESS"`) {
		t.Fatalf("approve: %s", out)
	}
	if !strings.Contains(h.journal(), "play.mkv") {
		t.Fatalf("the device did not run it: %q", h.journal())
	}
	// words with a space reach cobra as one, quoted as for a remote shell
	if out, _ := s.must(ada, 0, "deny", "loud", "--reason", "'too loud tonight'", "--json"); !strings.Contains(out, "APPROVAL_DENIED") || !strings.Contains(out, "too loud tonight") {
		t.Fatalf("deny: %s", out)
	}

	out, errs := s.must(ada, 0, "result", "play")
	if !strings.Contains(out, `"SUCCESS"`) || !strings.Contains(errs, "decided by operator:ada via ssh") {
		t.Fatalf("result: %s\n%s", out, errs)
	}
	if out, errs := s.must(ada, 1, "result", "loud", "--json"); !strings.Contains(out, "APPROVAL_DENIED") || !strings.Contains(errs, "reason: too loud tonight") {
		t.Fatalf("result of the denied task: %s\n%s", out, errs)
	}
	for _, id := range []string{"play", "loud"} {
		e := h.decision(id)
		if e.Actor != "operator:ada" || e.Details["via"] != "ssh" || e.Details["key"] != ada.fingerprint {
			t.Fatalf("%s decision entry: %+v (want key %s)", id, e, ada.fingerprint)
		}
	}
	if e := h.decision("play"); e.Details["preview_hash"] != hash {
		t.Fatalf("the approval does not name the preview approved: %+v", e)
	}
	// the decided record carries the key too (decided_key)
	if out := h.must(0, "preview", "play", "--json"); !strings.Contains(out, `"decided_key": "`+ada.fingerprint+`"`) ||
		!strings.Contains(out, `"decided_via": "ssh"`) {
		t.Fatalf("record: %s", out)
	}
	h.must(0, "audit", "verify")
}

// Only the decision commands run, on the serve process's home: anything
// else is refused with exit 2 and says what runs.
func TestSSHExecRefusesOtherCommands(t *testing.T) {
	h := newCLIHome(t)
	ada := h.addOperators("", "ada")["ada"]
	h.must(0, "submit", h.manifest("t1", "1h"))
	s := h.serveSSH()
	for _, args := range [][]string{
		{"submit", "-"}, {"serve"}, {"keys", "init"}, {"audit", "seal", "--reason", "x"}, {"result", "verify", "/etc/passwd"},
		{"search", "root", "/"}, {"config"}, {"sh", "-c", "id"}, {"pending;", "id"},
		{"rules", "test", "/etc/passwd"}, {"rules", "check"}, {"rules"},
	} {
		out, errs := s.must(ada, 2, args...)
		if out != "" || !strings.Contains(errs, "over SSH only these commands run") {
			t.Errorf("%q: out %q err %q", args, out, errs)
		}
	}
	for _, args := range [][]string{{"pending", "--home", "/tmp"}, {"--config", "/tmp/x.toml", "pending"}, {"preview", "t1", "--theme", "light"}} {
		if out, errs := s.must(ada, 2, args...); out != "" || !strings.Contains(errs, "serve process's home") {
			t.Errorf("%q: out %q err %q", args, out, errs)
		}
	}
	if _, errs := s.must(ada, 2, "pending", "'unclosed"); !strings.Contains(errs, "No closing quotation") {
		t.Errorf("an open quote: %s", errs)
	}
	if out, _ := s.must(ada, 0, "approve", "--help"); !strings.Contains(out, "--expect-preview") {
		t.Errorf("approve --help: %s", out)
	}
	// an interactive request without a terminal says how to get one
	if _, errs := s.must(ada, 2); !strings.Contains(errs, "ssh -t") {
		t.Errorf("no command, no terminal: %s", errs)
	}
	if list := h.must(0, "pending"); !strings.Contains(list, "t1") {
		t.Fatalf("the task left the queue:\n%s", list)
	}
}

// A key nobody listed gets no byte of output and decides nothing.
func TestSSHUnlistedKeyGetsNothing(t *testing.T) {
	h := newCLIHome(t)
	h.addOperators("", "ada")
	stranger := newSSHKey(t, "stranger")
	h.must(0, "submit", h.manifest("t1", "1h"))
	s := h.serveSSH()
	hash := h.previewJSON("t1")["preview_hash"].(string)
	out, errs, code := s.run(stranger, "approve", "t1", "--expect-preview", hash)
	if out != "" || code != 255 || !strings.Contains(errs, "Permission denied (publickey)") {
		t.Fatalf("exit %d out %q err %q", code, out, errs)
	}
	if h.journal() != "" || !strings.Contains(h.must(0, "pending"), "t1") {
		t.Fatal("an unlisted key decided")
	}
	if log := s.stderr.String(); !strings.Contains(log, "key not listed") || !strings.Contains(log, stranger.fingerprint) {
		t.Fatalf("serve's log:\n%s", log)
	}
}

// --ssh needs someone to let in, and a loopback address unless told.
func TestServeSSHRefusesWithoutOperatorsOrOnARemoteAddress(t *testing.T) {
	h := newCLIHome(t)
	if _, errs, code := runReal(t, h.home, "serve", "--ssh", "127.0.0.1:0"); code != 2 || !strings.Contains(errs, "lists no operator") {
		t.Fatalf("no operators: exit %d %s", code, errs)
	}
	h.addOperators("", "ada")
	if _, errs, code := runReal(t, h.home, "serve", "--ssh", "0.0.0.0:0"); code != 2 || !strings.Contains(errs, "needs --allow-remote") {
		t.Fatalf("0.0.0.0: exit %d %s", code, errs)
	}
	if _, errs, code := runReal(t, h.home, "serve", "--ssh", "nonsense"); code != 2 || !strings.Contains(errs, "must be host:port") {
		t.Fatalf("nonsense: exit %d %s", code, errs)
	}
}

// On a home where decisions need an operator's key, this account's own
// approve decides nothing, and an operator over SSH decides.
func TestSSHDecidesWhereAnOperatorKeyIsRequired(t *testing.T) {
	h := newCLIHome(t)
	ada := h.addOperators("[decisions]\nrequire_operator_key = true", "ada")["ada"]
	h.must(0, "submit", h.manifest("locked", "1h"))
	hash := h.previewJSON("locked")["preview_hash"].(string)
	s := h.serveSSH()
	if _, _, code := runReal(t, h.home, "approve", "locked", "--yes", "--expect-preview", hash); code == 0 {
		t.Fatal("a local approve decided on a home that requires an operator key")
	}
	if h.journal() != "" || !strings.Contains(h.must(0, "pending"), "locked") {
		t.Fatal("the local approve ran the task")
	}
	if out, _ := s.must(ada, 0, "approve", "locked", "--expect-preview", hash); !strings.Contains(out, `"SUCCESS"`) {
		t.Fatalf("approve over SSH: %s", out)
	}
	if e := h.decision("locked"); e.Actor != "operator:ada" || e.Details["key"] != ada.fingerprint {
		t.Fatalf("decision: %+v", e)
	}
}

// An operator adds, lists and revokes runtime rules over SSH (on a home
// that requires an operator's key, nobody else may), recorded as them.
func TestSSHExecRunsRuntimeRules(t *testing.T) {
	h := newCLIHome(t)
	ada := h.addOperators("", "ada")["ada"]
	s := h.serveSSH()
	out, _ := s.must(ada, 0, "rules", "add", "--decision", "deny", "--cap", "MEDIA_PLAY", "--for", "1h", "--reason", "'no films tonight'", "--json")
	var added struct {
		ID        string `json:"id"`
		CreatedBy string `json:"created_by"`
	}
	if err := json.Unmarshal([]byte(out), &added); err != nil || added.ID == "" || added.CreatedBy != "operator:ada" {
		t.Fatalf("rules add over SSH: %q (%v)", out, err)
	}
	if list, _ := s.must(ada, 0, "rules", "list", "--json"); !strings.Contains(list, added.ID) {
		t.Fatalf("rules list over SSH: %s", list)
	}
	s.must(ada, 0, "rules", "revoke", added.ID, "--reason", "'films after all'")
	if log := h.must(0, "audit", "show", "--json"); !strings.Contains(log, `"rule_revoked"`) || !strings.Contains(log, `"via":"ssh"`) {
		t.Fatalf("the log does not hold the SSH operator's rule changes:\n%s", log)
	}
}
