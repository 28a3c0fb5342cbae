package cli

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/safetext"
)

// Issue 18: everything an agent, a file, a mailbox or a memory supplies is
// hostile until shown safely. These tests put one string of each family a
// terminal acts on, or a person cannot see, into each field an agent
// controls, and check the bytes every human surface of the CLI writes.

// hostileFamilies are the strings; mark is the escape that must be visible
// where the string is shown; ctrl marks the ones holding a control or format
// character, which submit rejects in lease claims and ids.
var hostileFamilies = []struct {
	name, raw, mark string
	ctrl            bool
}{
	{"CSI clear+home", "\x1b[2J\x1b[Hfake", `\x1b`, true},
	{"OSC 0 title", "\x1b]0;pwned\x07", `\x1b`, true},
	{"OSC 2 title", "\x1b]2;pwned\x1b\\", `\x1b`, true},
	{"OSC 8 hyperlink", "\x1b]8;;https://evil.example/\x1b\\ok\x1b]8;;\x1b\\", `\x1b`, true},
	{"OSC 52 clipboard", "\x1b]52;c;cm0gLXJmIH4=\x07", `\x1b`, true},
	{"DCS", "\x1bP+q544e\x1b\\", `\x1b`, true},
	{"C1 CSI", "a\u009b2Jb", `\u009b`, true},
	{"C1 OSC", "\u009d0;t\u009c", `\u009d`, true},
	{"CR overwrite", "agent:good\rEVIL", `\r`, true},
	{"BS", "abc\b\b\bxyz", `\x08`, true},
	{"NEL", "a\u0085b", `\u0085`, true},
	{"DEL", "a\x7fb", `\x7f`, true},
	{"RLO", "invoice\u202egpj.mp3", `\u202e`, true},
	{"RLI/PDI", "a\u2067b\u2069", `\u2067`, true},
	{"LRM", "a\u200eb", `\u200e`, true},
	{"ZWSP", "paypa\u200bl", `\u200b`, true},
	{"word joiner", "a\u2060b", `\u2060`, true},
	{"BOM", "\ufeffx", `\ufeff`, true},
	{"soft hyphen", "pay\u00adpal", `\u00ad`, true},
	{"tag character", "a\U000e0041", `\U000e0041`, true},
	{"NBSP", "a\u00a0b", `\u00a0`, false},
	{"line separator", "a\u2028b", `\u2028`, false},
	{"paragraph separator", "a\u2029b", `\u2029`, false},
	{"hangul filler", "a\u3164b", `\u3164`, false},
	{"forged escape", `a\u202eb`, `a\\u202eb`, false},
}

// hostileURIs are media_uri values: controls and bidi controls are rejected
// at submit; other format characters pass and must be shown escaped, with
// the preview's warning (warn) where there is one to give.
var hostileURIs = []struct {
	name, uri, mark, warn string
	accept                bool
}{
	{"CSI", "https://a.example/\x1b[2Jx.mp3", "", "", false},
	{"OSC 0", "https://a.example/\x1b]0;pwned\x07.mp3", "", "", false},
	{"OSC 8", "https://a.example/\x1b]8;;https://evil/\x1b\\x.mp3", "", "", false},
	{"OSC 52", "https://a.example/\x1b]52;c;eA==\x07", "", "", false},
	{"DCS", "/music/\x1bP+q\x1b\\.mp3", "", "", false},
	{"C1 CSI", "https://a.example/\u009b2J.mp3", "", "", false},
	{"CR", "/music/good\rEVIL.mp3", "", "", false},
	{"BS", "/music/abc\b\bx.mp3", "", "", false},
	{"NEL", "https://a.example/a\u0085b.mp3", "", "", false},
	{"DEL", "/music/a\x7f.mp3", "", "", false},
	{"RLO", "https://a.example/invoice\u202egpj.mp3", "", "", false},
	{"RLI", "/music/\u2067x\u2069.mp3", "", "", false},
	{"LRM in host", "https://pay\u200epal.com/x.mp3", "", "", false},
	{"ZWSP in host", "https://paypa\u200bl.com/song.mp3", `paypa\u200bl.com`, "hidden character", true},
	{"word joiner", "https://a.example/a\u2060b.mp3", `a\u2060b`, "hidden character", true},
	{"BOM", "https://a.example/\ufeffx.mp3", `\ufeffx`, "hidden character", true},
	{"soft hyphen in host", "https://pay\u00adpal.com/x.mp3", `pay\u00adpal`, "hidden character", true},
	{"tag character", "https://a.example/a\U000e0041.mp3", `a\U000e0041`, "hidden character", true},
	{"NBSP in a path", "/music/a\u00a0b.mp3", `a\u00a0b`, "hidden character", true},
	{"line separator in a path", "/music/a\u2028b.mp3", `a\u2028b`, "hidden character", true},
	{"Cyrillic look-alike host", "https://p\u0430ypal.com/song.mp3", "", "look-alike", true},
	{"forged escape in a path", `/music/\u202e.mp3`, `\\u202e`, "", true},
}

// leak names the first byte or character of out that no human surface may
// write from the data: any C0 control but the \n and \t Vigil writes for
// layout, DEL, C1, ESC, format characters, line and paragraph separators,
// spaces other than U+0020, invisible letters, and bytes that are not UTF-8.
func leak(out string) string {
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		if r == utf8.RuneError && size <= 1 {
			return fmt.Sprintf("the byte %#x at %d", out[i], i)
		}
		if _, esc := safetext.Escape(r); esc && r != '\n' && r != '\t' {
			return fmt.Sprintf("%U at byte %d (…%q…)", r, i, out[max(i-24, 0):min(i+24, len(out))])
		}
		i += size
	}
	return ""
}

// sgr is the styling a terminal surface may write: select graphic rendition.
var sgr = regexp.MustCompile("\x1b\\[[0-9;:]*m")

// leaks collects, per surface, the cases whose output leaked, so the failure
// says which surfaces (and so whose files) still let the data through.
type leaks struct {
	mu sync.Mutex
	m  map[string][]string
}

func (l *leaks) check(t *testing.T, surface, cas, out string) bool {
	t.Helper()
	if what := leak(out); what != "" {
		l.mu.Lock()
		if l.m == nil {
			l.m = map[string][]string{}
		}
		l.m[surface] = append(l.m[surface], cas+": "+what)
		l.mu.Unlock()
		return false
	}
	return true
}

func (l *leaks) report(t *testing.T) {
	t.Helper()
	names := make([]string, 0, len(l.m))
	for s := range l.m {
		names = append(names, s)
	}
	sort.Strings(names)
	for _, s := range names {
		cases := l.m[s]
		shown := cases
		if len(shown) > 4 {
			shown = append(append([]string(nil), cases[:4]...), fmt.Sprintf("… and %d more", len(cases)-4))
		}
		t.Errorf("surface %q leaks raw characters from the data in %d case(s):\n  %s", s, len(cases), strings.Join(shown, "\n  "))
	}
}

// hostileHome is a home with keys, a config trusting the local issuer and a
// sim device, driven through the real command tree.
type hostileHome struct {
	t      *testing.T
	dir    string
	issuer crypto.Signer
	env    map[string]string
}

var hostileNow = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

const hostileConfig = `[leases]
issuer = "abos-policy-authority"
audience = "abos-executor"
[[leases.keys]]
kid = "local"
alg = "EdDSA"
public_key = "keys/issuer.pub.pem"

[[devices]]
id = "living-room"
driver = "sim"
`

func newHostileHome(t *testing.T) *hostileHome {
	t.Helper()
	h := &hostileHome{t: t, dir: t.TempDir(), env: map[string]string{}}
	if err := os.WriteFile(filepath.Join(h.dir, "config.toml"), []byte(hostileConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := h.run(nil, "keys", "init"); code != 0 {
		t.Fatalf("keys init: %d %s", code, errs)
	}
	key, _, err := lease.LoadPrivateKey(filepath.Join(h.dir, "keys", lease.IssuerKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	h.issuer = key
	return h
}

// streams are what a command reads and writes; nil fields are buffers.
type streams struct {
	in       io.Reader
	out, err io.Writer
	ctx      context.Context
}

func (h *hostileHome) app(s *streams) *App {
	app := NewApp()
	app.In, app.Out, app.Err = s.in, s.out, s.err
	app.Now = func() time.Time { return hostileNow }
	app.Getenv = func(k string) string { return h.env[k] }
	app.Cwd = h.dir
	return app
}

// run runs one command as `vigil --home DIR args…` does, errors printed by
// PrintError (what Execute's handler does), and returns stdout, stderr and
// the exit code. stdin is the given bytes.
func (h *hostileHome) run(stdin []byte, args ...string) (string, string, int) {
	h.t.Helper()
	var out, errb bytes.Buffer
	code := h.runWith(&streams{in: bytes.NewReader(stdin), out: &out, err: &errb}, args...)
	return out.String(), errb.String(), code
}

func (h *hostileHome) runWith(s *streams, args ...string) int {
	app := h.app(s)
	root := NewRootCmd(app)
	root.SetArgs(append([]string{"--home", h.dir}, args...))
	ctx := s.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	err := root.ExecuteContext(ctx)
	PrintError(s.err, err)
	return ExitCode(err)
}

// onTerminal runs a command with stdin, stdout and stderr on a
// pseudo-terminal, typing input, and returns every byte the terminal got.
func (h *hostileHome) onTerminal(input string, args ...string) (string, int) {
	h.t.Helper()
	master, slave := openPTY(h.t)
	if input != "" {
		if _, err := master.WriteString(input); err != nil {
			h.t.Fatal(err)
		}
	}
	var got bytes.Buffer
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(&got, master) // ends with EIO once the slave is closed
		close(done)
	}()
	code := h.runWith(&streams{in: slave, out: slave, err: slave}, args...)
	slave.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		h.t.Fatal("the terminal's output did not end")
	}
	return got.String(), code
}

// lease signs a lease whose claims the test chooses byte for byte (the
// issuing command may refuse hostile claims; an agent's issuer need not).
func (h *hostileHome) lease(sub, jti, taskID, capID string) string {
	h.t.Helper()
	c := lease.Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer: "abos-policy-authority", Audience: jwt.ClaimStrings{"abos-executor"}, Subject: sub, ID: jti,
			IssuedAt: jwt.NewNumericDate(hostileNow), NotBefore: jwt.NewNumericDate(hostileNow),
			ExpiresAt: jwt.NewNumericDate(hostileNow.Add(30 * time.Minute)),
		},
		TaskID: taskID, Caps: []string{capID},
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, c)
	tok.Header["kid"] = lease.LocalIssuerKID
	s, err := tok.SignedString(h.issuer)
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

type manifestFields struct{ sub, jti, taskID, leaseTaskID, device, uri string }

func (h *hostileHome) manifest(f manifestFields) []byte {
	if f.sub == "" {
		f.sub = "agent:planner"
	}
	if f.jti == "" {
		f.jti = "jti-" + f.taskID
	}
	if f.leaseTaskID == "" {
		f.leaseTaskID = f.taskID
	}
	if f.device == "" {
		f.device = "living-room"
	}
	if f.uri == "" {
		f.uri = "/music/song.mp3"
	}
	b, _ := json.Marshal(map[string]any{"task_id": f.taskID, "capability_id": "MEDIA_PLAY",
		"inputs": map[string]any{"media_uri": f.uri, "target_device": f.device},
		"lease":  h.lease(f.sub, f.jti, f.leaseTaskID, "MEDIA_PLAY")})
	return b
}

// submit submits a manifest and reports whether it is pending; every byte
// it wrote is checked.
func (h *hostileHome) submit(l *leaks, cas string, m []byte) (pending bool, code int) {
	h.t.Helper()
	out, errs, code := h.run(m, "submit", "-")
	l.check(h.t, "submit (stdout)", cas, out)
	l.check(h.t, "submit (errors)", cas, errs)
	var o struct{ State string }
	_ = json.Unmarshal([]byte(out), &o)
	return o.State == "pending", code
}

// TestHostileClaimsAreRejectedAtSubmit: lease sub and jti, task_id and
// target_device may not carry a control or format character — submit
// rejects them (exit 2, nothing pending) in words that carry none either.
func TestHostileClaimsAreRejectedAtSubmit(t *testing.T) {
	h := newHostileHome(t)
	var l leaks
	for i, c := range hostileFamilies {
		for _, field := range []string{"sub", "jti", "task_id", "lease task_id", "target_device"} {
			f := manifestFields{taskID: fmt.Sprintf("claim-%d", i)}
			switch field {
			case "sub":
				f.sub = "agent:" + c.raw
			case "jti":
				f.jti = "jti-" + c.raw
			case "task_id":
				f.taskID = "t" + c.raw
			case "lease task_id":
				f.leaseTaskID = "t" + c.raw
			case "target_device":
				f.device = "living" + c.raw
			}
			cas := c.name + " in " + field
			pending, code := h.submit(&l, cas, h.manifest(f))
			if c.ctrl && (pending || code != ExitBadInput) {
				t.Errorf("%s: submit accepted it (pending %v, exit %d); a control or format character must be rejected", cas, pending, code)
			}
			if pending {
				t.Logf("%s: accepted; checked on every surface", cas)
				// it got through: the screens below must show it safely
				h.checkTaskSurfaces(&l, cas, f.taskID, c.mark)
				h.run(nil, "deny", f.taskID, "--reason", "test")
			}
		}
	}
	h.checkAuditSurfaces(&l, "after hostile claims")
	l.report(t)
}

// TestHostileMediaURIs: controls and bidi controls are rejected at submit;
// every other hostile media_uri reaches pending, preview, the approve prompt,
// deny, result and the audit commands only escaped, with the preview's
// warnings.
func TestHostileMediaURIs(t *testing.T) {
	h := newHostileHome(t)
	var l leaks
	for i, c := range hostileURIs {
		id := fmt.Sprintf("uri-%d", i)
		pending, code := h.submit(&l, c.name, h.manifest(manifestFields{taskID: id, uri: c.uri}))
		if !c.accept {
			if pending || code != ExitBadInput {
				t.Errorf("%s: media_uri %q accepted (pending %v, exit %d); controls and bidi controls are rejected", c.name, c.uri, pending, code)
			}
			continue
		}
		if !pending {
			t.Errorf("%s: media_uri %q rejected (exit %d); format characters are accepted and shown escaped", c.name, c.uri, code)
			continue
		}
		prev := h.checkTaskSurfaces(&l, c.name, id, c.mark)
		if c.warn != "" && !strings.Contains(prev, c.warn) {
			t.Errorf("%s: the preview does not warn %q:\n%s", c.name, c.warn, prev)
		}
		if c.name == "Cyrillic look-alike host" && !strings.Contains(prev, "xn--pypal-4ve.com") {
			t.Errorf("%s: the preview does not show the host's punycode:\n%s", c.name, prev)
		}
		// a hostile reason from the operator's side goes back to the agent and into the log
		reason := "no: " + hostileFamilies[i%len(hostileFamilies)].raw
		out, errs, _ := h.run(nil, "deny", id, "--reason", reason)
		l.check(t, "deny", c.name, out)
		l.check(t, "deny (errors)", c.name, errs)
		out, errs, _ = h.run(nil, "result", id)
		l.check(t, "result", c.name, out)
		l.check(t, "result (errors)", c.name, errs)
	}
	// one runs: its signed result carries the URI
	id := "uri-run"
	if pending, _ := h.submit(&l, "run", h.manifest(manifestFields{taskID: id, uri: "https://paypa\u200bl.com/song.mp3"})); pending {
		out, errs, code := h.run(nil, "approve", id, "--yes")
		l.check(t, "approve --yes", "ZWSP host", out)
		l.check(t, "approve --yes (errors)", "ZWSP host", errs)
		if code != 0 {
			t.Errorf("approve --yes: exit %d %s", code, errs)
		}
		out, _, _ = h.run(nil, "result", id)
		l.check(t, "result", "executed ZWSP host", out)
	}
	h.checkAuditSurfaces(&l, "after hostile media_uris")
	l.report(t)
}

// checkTaskSurfaces checks a pending task on pending, preview (human and
// JSON) and the approve prompt answered n on a terminal, and returns the
// preview's text. mark, when set, must be visible in the preview.
func (h *hostileHome) checkTaskSurfaces(l *leaks, cas, id, mark string) string {
	t := h.t
	t.Helper()
	out, errs, code := h.run(nil, "pending")
	l.check(t, "pending", cas, out)
	l.check(t, "pending (errors)", cas, errs)
	if code != 0 {
		t.Errorf("%s: pending exit %d: %s", cas, code, errs)
	}
	out, errs, _ = h.run(nil, "pending", "--json")
	l.check(t, "pending --json", cas, out)
	l.check(t, "pending --json (errors)", cas, errs)

	prev, errs, code := h.run(nil, "preview", id)
	l.check(t, "preview", cas, prev)
	l.check(t, "preview (errors)", cas, errs)
	if code != 0 {
		t.Errorf("%s: preview exit %d: %s", cas, code, errs)
	}
	if mark != "" && !strings.Contains(prev, mark) {
		t.Errorf("%s: the preview does not show %s:\n%s", cas, mark, prev)
	}
	out, errs, _ = h.run(nil, "preview", id, "--json")
	l.check(t, "preview --json", cas, out)
	l.check(t, "preview --json (errors)", cas, errs)

	term, code := h.onTerminal("n\n", "approve", id)
	// the prompt may style escapes as a warning on a terminal; nothing else
	l.check(t, "approve prompt", cas, sgr.ReplaceAllString(term, ""))
	if code != ExitCheck || !strings.Contains(term, "[y/N]") {
		t.Errorf("%s: approve answered n: exit %d, terminal got %q", cas, code, term)
	}
	if mark != "" && !strings.Contains(sgr.ReplaceAllString(term, ""), mark) {
		t.Errorf("%s: the approve prompt does not show %s", cas, mark)
	}
	return prev
}

// checkAuditSurfaces checks what the audit commands print for a person.
func (h *hostileHome) checkAuditSurfaces(l *leaks, cas string) {
	t := h.t
	t.Helper()
	for _, args := range [][]string{{"audit", "show"}, {"audit", "show", "--json"}, {"audit", "verify"}, {"audit", "verify", "--json"}} {
		out, errs, _ := h.run(nil, args...)
		name := strings.Join(args, " ")
		l.check(t, name, cas, out)
		l.check(t, name+" (errors)", cas, errs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	var out, errb syncBuffer
	h.runWith(&streams{in: strings.NewReader(""), out: &out, err: &errb, ctx: ctx}, "audit", "tail")
	l.check(t, "audit tail", cas, out.String())
	l.check(t, "audit tail (errors)", cas, errb.String())
}

// TestHostileAuditFields: a log written by anything (an older Vigil, another
// tool, an agent with access to the file) is read back only escaped, and a
// tampered hostile line is reported without its raw bytes.
func TestHostileAuditFields(t *testing.T) {
	h := newHostileHome(t)
	log, err := audit.Open(filepath.Join(h.dir, "audit.log"), func() time.Time { return hostileNow })
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range hostileFamilies {
		e := audit.Entry{Actor: "agent:" + c.raw, Event: audit.EventSubmitted, TaskID: "t" + c.raw, Capability: "MEDIA_" + c.raw,
			Target: "dev" + c.raw, TokenJTI: "jti" + c.raw, ErrorCode: "E" + c.raw,
			Details: audit.Details(map[string]any{"reason": c.raw, "message": "m" + c.raw})}
		if _, err := log.Append(e); err != nil {
			t.Logf("%s: the log refused the entry: %v", c.name, err)
		}
	}
	var l leaks
	h.checkAuditSurfaces(&l, "hostile entries")
	for _, c := range hostileFamilies[:3] {
		out, errs, _ := h.run(nil, "audit", "show", "--task", "t"+c.raw)
		l.check(t, "audit show --task", c.name, out)
		l.check(t, "audit show --task (errors)", c.name, errs)
	}
	// shown, the fields are visible as escapes
	out, _, _ := h.run(nil, "audit", "show")
	if !strings.Contains(out, `\x1b`) && !strings.Contains(out, `\u202e`) {
		t.Errorf("audit show does not show the hostile fields escaped:\n%s", out)
	}
	// tamper with a hostile line: verify names it without echoing it raw
	path := filepath.Join(h.dir, "audit.log")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw = bytes.Replace(raw, []byte(`"agent:\u001b]0;pwned\u0007"`), []byte("\"agent:\x1b]0;pwned\x07\""), 1)
	raw = bytes.Replace(raw, []byte("agent:invoice"), []byte("agent:INVOICE"), 1)
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	h.checkAuditSurfaces(&l, "tampered hostile entries")
	if _, _, code := h.run(nil, "audit", "verify"); code != ExitCheck {
		t.Errorf("audit verify of a tampered log: exit %d, want %d", code, ExitCheck)
	}
	l.report(t)
}

// TestHostileMemories: memory texts, tags and sources come back through
// `memory search --text` only escaped, and through the JSON forms exact but
// with every invisible or control character as a JSON escape.
func TestHostileMemories(t *testing.T) {
	h := newHostileHome(t)
	var l leaks
	for i, c := range hostileFamilies {
		marker := fmt.Sprintf("hostilemarker%d", i)
		out, errs, code := h.run(nil, "memory", "add", "--text", marker+" before "+c.raw+" after\nline two",
			"--tag", "tag"+c.raw, "--source", "src"+c.raw)
		l.check(t, "memory add", c.name, out)
		l.check(t, "memory add (errors)", c.name, errs)
		if code != 0 {
			t.Logf("%s: memory add refused it (exit %d): %s", c.name, code, errs)
			continue
		}
		out, errs, _ = h.run(nil, "memory", "search", "-q", marker, "--text")
		l.check(t, "memory search --text", c.name, out)
		l.check(t, "memory search --text (errors)", c.name, errs)
		if shown := safetext.Line(c.raw); !strings.Contains(out, "before "+shown+" after") || !strings.Contains(out, "tag"+shown) {
			t.Errorf("%s: memory search --text does not show %s:\n%s", c.name, c.mark, out)
		}
		out, errs, _ = h.run(nil, "memory", "search", "-q", marker)
		l.check(t, "memory search (JSON)", c.name, out)
		l.check(t, "memory search (JSON, errors)", c.name, errs)
		var res struct {
			Content []struct{ Text string }
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, c.raw) {
			t.Errorf("%s: the JSON response is not exact: %v %q", c.name, err, out)
		}
	}
	l.report(t)
}

// TestHostileErrors: error messages embed ids, file names and paths; the
// CLI prints them escaped and keeps its exit codes.
func TestHostileErrors(t *testing.T) {
	h := newHostileHome(t)
	var l leaks
	for _, c := range hostileFamilies {
		id := "t" + c.raw
		for _, args := range [][]string{
			{"preview", id}, {"result", id}, {"approve", id, "--yes"}, {"deny", id, "--reason", "x"},
			{"audit", "show", "--event", c.raw}, {"memory", "search", `{"query":` + mustJSON(c.raw) + `,"limit":"x"}`, "--text"},
			{"--config", filepath.Join(h.dir, "no"+c.raw+".toml"), "pending"},
			{"no-such-command" + c.raw},
		} {
			out, errs, code := h.run(nil, args...)
			name := args[0]
			l.check(t, name+" error", c.name, errs)
			l.check(t, name+" error (stdout)", c.name, out)
			if mustFail := args[0] != "memory" && args[0] != "audit" && args[0] != "--config"; code == 0 && mustFail {
				t.Errorf("%s: %q succeeded", c.name, args)
			}
		}
		// a file whose name and contents are hostile
		name := filepath.Join(h.dir, "mem"+strings.ReplaceAll(c.raw, "/", "_")+".jsonl")
		if err := os.WriteFile(name, []byte("{\"text\":"+mustJSON(c.raw)+",\"created_at\":\"not a date "+c.raw+"\"}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		out, errs, code := h.run(nil, "memory", "import", name)
		l.check(t, "memory import error", c.name, errs)
		l.check(t, "memory import error (stdout)", c.name, out)
		if code != ExitBadInput {
			t.Errorf("%s: memory import of a bad line: exit %d, want %d (%s)", c.name, code, ExitBadInput, errs)
		}
		if c.name == "CSI clear+home" && !strings.Contains(errs, `\x1b[2J`) {
			t.Errorf("the file name is not shown escaped: %q", errs)
		}
	}
	l.report(t)
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// PrintError keeps joined errors on their own lines and escapes each.
func TestHostilePrintError(t *testing.T) {
	var b bytes.Buffer
	PrintError(&b, Fail(ExitExecution, fmt.Errorf("open %s: %w", "a\x1b]0;t\x07\nb", os.ErrNotExist)))
	if got := b.String(); got != "vigil: open a\\x1b]0;t\\x07\\nb: file does not exist\n" {
		t.Fatalf("PrintError = %q", got)
	}
	b.Reset()
	PrintError(&b, Fail(ExitExecution, errors.Join(fmt.Errorf("first \u202e"), fmt.Errorf("second\rx"))))
	if got := b.String(); got != "vigil: first \\u202e\nvigil: second\\rx\n" {
		t.Fatalf("joined PrintError = %q", got)
	}
	b.Reset()
	PrintError(&b, Quiet(ExitCheck))
	if b.Len() != 0 {
		t.Fatalf("a quiet error printed %q", b.String())
	}
}

// PrintJSON stays exact but writes every character a terminal could act on
// or a person could not see as a JSON escape.
func TestHostilePrintJSON(t *testing.T) {
	var b bytes.Buffer
	app := &App{Out: &b}
	in := map[string]string{}
	for _, c := range hostileFamilies {
		in[c.name] = c.raw
	}
	in["plain"] = "café ☕ 日本語 C:\\x"
	if err := app.PrintJSON(in); err != nil {
		t.Fatal(err)
	}
	if what := leak(b.String()); what != "" {
		t.Fatalf("PrintJSON wrote %s", what)
	}
	var back map[string]string
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for k, v := range in {
		if back[k] != v {
			t.Errorf("%s: %q came back as %q", k, v, back[k])
		}
	}
	if !strings.Contains(b.String(), "café ☕ 日本語") {
		t.Errorf("printable text was escaped: %s", b.String())
	}
}

// TestHostileNoColor: under NO_COLOR, even on a terminal, the human output
// carries no styling at all — the escapes are plain text — and is still safe.
func TestHostileNoColor(t *testing.T) {
	h := newHostileHome(t)
	t.Setenv("NO_COLOR", "1")
	h.env["NO_COLOR"] = "1"
	var l leaks
	id := "nocolor-1"
	if pending, code := h.submit(&l, "no color", h.manifest(manifestFields{taskID: id, uri: "https://paypa\u200bl.com/song.mp3"})); !pending {
		t.Fatalf("submit: exit %d", code)
	}
	if _, errs, code := h.run(nil, "memory", "add", "--text", "nocolormarker a\u200bb", "--tag", "t\u202e"); code != 0 {
		t.Fatalf("memory add: %s", errs)
	}
	for _, args := range [][]string{
		{"pending"}, {"preview", id}, {"approve", id}, {"audit", "show"}, {"audit", "verify"},
		{"memory", "search", "-q", "nocolormarker", "--text"}, {"preview", "no-such\u202etask"},
	} {
		term, _ := h.onTerminal("n\n", args...)
		name := strings.Join(args, " ")
		if strings.Contains(term, "\x1b") {
			t.Errorf("NO_COLOR %s: styling escapes on the terminal: %q", name, term)
		}
		l.check(t, "NO_COLOR "+name, "no color", term)
	}
	term, _ := h.onTerminal("n\n", "preview", id)
	if !strings.Contains(term, `\u200b`) {
		t.Errorf("NO_COLOR preview does not show the escape as plain text: %q", term)
	}
	l.report(t)
}

// TestHostileSearchOutput: file names and matched lines come back in the
// search tool's JSON exact, with nothing raw a terminal acts on.
func TestHostileSearchOutput(t *testing.T) {
	h := newHostileHome(t)
	dir := filepath.Join(h.dir, "files")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for i, c := range hostileFamilies {
		name := fmt.Sprintf("f%d-%s.txt", i, strings.ReplaceAll(c.raw, "/", "_"))
		body := fmt.Sprintf("context before %s\nsearchmarker %s\n", c.raw, c.raw)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var l leaks
	for _, args := range [][]string{
		{"search", "-F", "-C", "1", "searchmarker", "files"},
		{"search", "--stream", "-F", "-C", "1", "searchmarker", "files"},
	} {
		out, errs, code := h.run(nil, args...)
		name := strings.Join(args[:2], " ")
		l.check(t, name, "hostile files", out)
		l.check(t, name+" (errors)", "hostile files", errs)
		if code != 0 || !strings.Contains(out, "searchmarker") {
			t.Errorf("%s: exit %d %s %.300s", name, code, errs, out)
		}
	}
	l.report(t)
}

// TestHostileMCPLogs: `vigil mcp` logs what clients send (query previews) to
// stderr, a person's terminal as often as not: exact JSON lines, nothing raw.
func TestHostileMCPLogs(t *testing.T) {
	h := newHostileHome(t)
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i, c := range hostileFamilies {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_memory","arguments":{"query":%s}}}`+"\n",
			i+2, mustJSON("q "+c.raw))
	}
	out, errs, code := h.run([]byte(in.String()), "mcp")
	if code != 0 || !strings.Contains(out, `"id":2`) {
		t.Fatalf("mcp: exit %d, stdout %.300q, stderr %.300q", code, out, errs)
	}
	if !strings.Contains(errs, "query_preview") {
		t.Fatalf("mcp logged no query preview: %.500q", errs)
	}
	var l leaks
	l.check(t, "mcp (log)", "hostile queries", errs)
	l.report(t)
}

// TestHostileScopedSearches: mailbox headers and dataset fields come back
// from SEARCH_* tasks (run at submission) in the signed result, printed by
// submit and result exact but with nothing raw, and the audit commands stay
// clean after them.
func TestHostileScopedSearches(t *testing.T) {
	h := newHostileHome(t)
	var mbox, csv strings.Builder
	csv.WriteString("id,name,note\n")
	q := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	for i, c := range hostileFamilies {
		// header values cannot hold line ends; the rest of each family can
		hv := strings.NewReplacer("\r", "", "\n", "").Replace(c.raw)
		fmt.Fprintf(&mbox, "From a@example.org Mon Jan  1 09:00:00 2024\nFrom: Agent %s <a@example.org>\nSubject: scopemarker %s\n"+
			"Date: Mon, 01 Jan 2024 09:00:00 +0000\nMessage-ID: <m%d@example.org>\n\nscopemarker body %s\n\n", hv, hv, i, c.raw)
		fmt.Fprintf(&csv, "%d,%s,%s\n", i+1, q("name "+c.raw), q("scopemarker "+c.raw))
	}
	if err := os.WriteFile(filepath.Join(h.dir, "mail.mbox"), []byte(mbox.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.dir, "people.csv"), []byte(csv.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := hostileConfig + "\n[[scopes]]\nname = \"mail\"\nkind = \"emails\"\npath = \"mail.mbox\"\n" +
		"\n[[scopes]]\nname = \"people\"\nkind = \"dataset\"\npath = \"people.csv\"\nprimary_key = \"id\"\n"
	if err := os.WriteFile(filepath.Join(h.dir, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var l leaks
	for _, s := range []struct{ id, capID, scope string }{{"s-mail", "SEARCH_EMAILS", "mail"}, {"s-people", "SEARCH_DATASETS", "people"}} {
		in, _ := json.Marshal(map[string]any{"query": "scopemarker", "target_scope": s.scope, "max_results": 100})
		m, _ := json.Marshal(map[string]any{"task_id": s.id, "capability_id": s.capID, "inputs": json.RawMessage(in),
			"lease": h.lease("agent:planner", "jti-"+s.id, s.id, s.capID)})
		out, errs, code := h.run(m, "submit", "-")
		l.check(t, "submit "+s.capID, s.scope, out)
		l.check(t, "submit "+s.capID+" (errors)", s.scope, errs)
		if code != 0 || !strings.Contains(out, "scopemarker") {
			t.Errorf("%s: exit %d %s %.400s", s.capID, code, errs, out)
		}

		out, errs, _ = h.run(nil, "result", s.id)
		l.check(t, "result "+s.capID, s.scope, out)
		l.check(t, "result "+s.capID+" (errors)", s.scope, errs)
	}
	h.checkAuditSurfaces(&l, "after scoped searches")
	l.report(t)
}
