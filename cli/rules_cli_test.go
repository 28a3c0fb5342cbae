package cli

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/lease"
)

const rulesConfig = `[[leases.keys]]
kid = "local"
alg = "EdDSA"
public_key = "keys/issuer.pub.pem"

[[devices]]
id = "kitchen"
driver = "sim"
[[devices]]
id = "living-room"
driver = "sim"

[[rules]]
id = "kitchen-pause"
decision = "allow"
agents = ["claude-home"]
capabilities = ["MEDIA_PAUSE"]
devices = ["kitchen"]
when = "hour >= 7 && hour < 23"
[[rules.examples]]
task = { agent = "claude-home", capability = "MEDIA_PAUSE", device = "kitchen", hour = 9 }
want = "allow"

[[rules]]
id = "play-from-media"
decision = "allow"
capabilities = ["MEDIA_PLAY"]
media_hosts = ["media.example.com", "*.xn--e1afmkfd.com"]
expires = "2030-01-01T00:00:00Z"

[[rules]]
id = "no-ads"
decision = "deny"
capabilities = ["MEDIA_PLAY"]
media_hosts = ["ads.example.com", "*.ads.example.com"]
[[rules.examples]]
task = { capability = "MEDIA_PLAY", device = "kitchen", media_uri = "https://ADS.example.com/spot.mp4" }
want = "deny"
`

// rulesHome is a home with an issuer key the config trusts, two simulated
// devices and the rules above (plus extra).
func rulesHome(t *testing.T, extra string) string {
	t.Helper()
	home := t.TempDir()
	if _, errs, code := run(t, home, "keys", "init"); code != 0 {
		t.Fatalf("keys init: %d %s", code, errs)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(rulesConfig+extra), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// manifest writes a manifest whose lease (signed by the home's issuer, or
// by key when given) names sub.
func manifest(t *testing.T, home, sub, capability, inputs string, key ed25519.PrivateKey) string {
	t.Helper()
	var signer crypto.Signer = key
	if key == nil {
		k, _, err := lease.LoadPrivateKey(filepath.Join(home, "keys", lease.IssuerKeyFile))
		if err != nil {
			t.Fatal(err)
		}
		signer = k
	}
	tok, err := lease.Issue(signer, lease.IssueOptions{Subject: sub, TaskID: "t-rules", Caps: []string{capability}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "manifest.json")
	body := fmt.Sprintf(`{"task_id":"t-rules","capability_id":%q,"inputs":%s,"lease":%q}`, capability, inputs, tok)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRulesListJSONAndText(t *testing.T) {
	home := rulesHome(t, "")
	out, errs, code := run(t, home, "rules", "list", "--json")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err, out)
	}
	if len(list) != 3 {
		t.Fatalf("%d rules: %s", len(list), out)
	}
	k := list[0]
	for key, want := range map[string]any{
		"id": "kitchen-pause", "decision": "allow", "source": "config", "created_by": "", "hits": 0.0, "active": true,
		"when": "hour >= 7 && hour < 23", "expires_at": nil,
	} {
		if k[key] != want {
			t.Errorf("%s = %#v, want %#v", key, k[key], want)
		}
	}
	for key, want := range map[string]string{"agents": "claude-home", "capabilities": "MEDIA_PAUSE", "devices": "kitchen"} {
		if l, _ := k[key].([]any); len(l) != 1 || l[0] != want {
			t.Errorf("%s = %#v", key, k[key])
		}
	}
	if l, ok := k["media_hosts"].([]any); !ok || len(l) != 0 {
		t.Errorf("an absent match field is an empty list: %#v", k["media_hosts"])
	}
	if h, _ := k["hash"].(string); !strings.HasPrefix(h, "sha256:") {
		t.Errorf("hash %#v", k["hash"])
	}
	if list[1]["expires_at"] != "2030-01-01T00:00:00Z" {
		t.Errorf("expires_at %#v", list[1]["expires_at"])
	}
	out, _, code = run(t, home, "rules", "list")
	if code != 0 || !strings.Contains(out, "kitchen-pause") || !strings.Contains(out, "agents=claude-home capabilities=MEDIA_PAUSE devices=kitchen when hour >= 7 && hour < 23") ||
		!strings.Contains(out, "2030-01-01T00:00:00Z") {
		t.Fatalf("text:\n%s", out)
	}
	empty := t.TempDir()
	if out, _, code := run(t, empty, "rules", "list", "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("no rules: %d %q", code, out)
	}
}

// testVerdict runs `rules test --json` and decodes it.
func testVerdict(t *testing.T, home string, args ...string) (map[string]any, int, string) {
	t.Helper()
	out, errs, code := run(t, home, append([]string{"rules", "test", "--json"}, args...)...)
	var v map[string]any
	if code == 0 {
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	return v, code, errs
}

func TestRulesTestExplainsAManifest(t *testing.T) {
	home := rulesHome(t, "")
	at := time.Date(2026, 3, 14, 9, 30, 0, 0, time.Local).Format(time.RFC3339)
	night := time.Date(2026, 3, 14, 23, 30, 0, 0, time.Local).Format(time.RFC3339)
	pause := manifest(t, home, "agent:claude-home", "MEDIA_PAUSE", `{"target_device":"kitchen"}`, nil)

	v, code, _ := testVerdict(t, home, "--at", at, pause)
	rule, _ := v["rule"].(map[string]any)
	if code != 0 || v["decision"] != "allow" || rule["id"] != "kitchen-pause" || v["reason"] != `rule "kitchen-pause" allows it` {
		t.Fatalf("exit %d: %v", code, v)
	}
	if l, _ := v["lease"].(map[string]any); l["verified"] != true {
		t.Fatalf("lease: %v", v["lease"])
	}
	if f, _ := v["facts"].(map[string]any); f["agent"] != "claude-home" || f["device"] != "kitchen" {
		t.Fatalf("facts: %v", v["facts"])
	}
	listOut, _, _ := run(t, home, "rules", "list", "--json")
	if !strings.Contains(listOut, rule["hash"].(string)) {
		t.Fatalf("the verdict's hash is the listed rule's: %v", rule)
	}

	if v, _, _ := testVerdict(t, home, "--at", night, pause); v["decision"] != "ask" || v["rule"] != nil || len(v["matched"].([]any)) != 0 {
		t.Fatalf("23:30: %v", v)
	}
	if v, _, _ := testVerdict(t, home, "--at", at, manifest(t, home, "agent:claude-work", "MEDIA_PAUSE", `{"target_device":"kitchen"}`, nil)); v["decision"] != "ask" {
		t.Fatalf("another agent: %v", v)
	}

	play := func(uri string) string {
		return manifest(t, home, "agent:claude-home", "MEDIA_PLAY", fmt.Sprintf(`{"target_device":"living-room","media_uri":%q}`, uri), nil)
	}
	if v, _, _ := testVerdict(t, home, play("https://media.example.com/a.mp3")); v["decision"] != "allow" {
		t.Fatalf("plain host: %v", v)
	}
	// a look-alike host an allow rule names (in punycode) still asks
	v, _, _ = testVerdict(t, home, play("https://cdn.пример.com/a.mp3"))
	if v["decision"] != "ask" || v["rule"] != nil || !strings.Contains(v["reason"].(string), `rule "play-from-media" would allow it, but its preview warns`) || v["warnings"] == nil {
		t.Fatalf("warning beats allow: %v", v)
	}
	if v, _, _ := testVerdict(t, home, play("https://ａｄｓ.example.com/spot.mp4")); v["decision"] != "deny" || v["rule"].(map[string]any)["id"] != "no-ads" {
		t.Fatalf("deny on a respelled host: %v", v)
	}

	out, _, code := run(t, home, "rules", "test", "--at", at, pause)
	if code != 0 || !strings.Contains(out, "decision: allow\nby rule:  kitchen-pause (config, sha256:") || !strings.Contains(out, "matched:\n  allow kitchen-pause") {
		t.Fatalf("text:\n%s", out)
	}
}

func TestRulesTestLeaseAndInput(t *testing.T) {
	home := rulesHome(t, "")
	_, stranger, _ := ed25519.GenerateKey(nil)
	forged := manifest(t, home, "agent:claude-home", "MEDIA_PAUSE", `{"target_device":"kitchen"}`, stranger)
	v, code, _ := testVerdict(t, home, forged)
	l, _ := v["lease"].(map[string]any)
	if code != 0 || l["verified"] != false || !strings.Contains(fmt.Sprint(l["error"]), "signature check failed") {
		t.Fatalf("a lease that does not verify is reported: %d %v", code, v)
	}
	out, _, _ := run(t, home, "rules", "test", forged)
	if !strings.Contains(out, "lease:    does not verify") {
		t.Fatalf("text says so:\n%s", out)
	}
	if v, _, _ := testVerdict(t, home, "--agent", "someone", forged); v["facts"].(map[string]any)["agent"] != "someone" {
		t.Fatalf("--agent: %v", v)
	}
	for name, args := range map[string][]string{
		"device not configured": {manifest(t, home, "agent:a", "MEDIA_PAUSE", `{"target_device":"garage"}`, nil)},
		"not a manifest":        {writeTemp(t, `{"task_id":`)},
		"search task":           {manifest(t, home, "agent:a", "SEARCH", `{}`, nil)},
		"bad --at":              {"--at", "9am", forged},
		"missing file":          {filepath.Join(t.TempDir(), "none.json")},
	} {
		if _, code, errs := testVerdict(t, home, args...); code != ExitBadInput || errs == "" {
			t.Errorf("%s: exit %d, stderr %q", name, code, errs)
		}
	}

	// "-" reads the manifest from stdin
	raw, err := os.ReadFile(forged)
	if err != nil {
		t.Fatal(err)
	}
	var outb, errb bytes.Buffer
	app := NewApp()
	app.Out, app.Err, app.In, app.Getenv, app.Cwd = &outb, &errb, bytes.NewReader(raw), func(string) string { return "" }, home
	if code := execute(context.Background(), app, []string{"--home", home, "rules", "test", "--json", "-"}); code != 0 || !strings.Contains(outb.String(), `"task_id": "t-rules"`) {
		t.Fatalf("stdin: %d %s %s", code, outb.String(), errb.String())
	}
}

func writeTemp(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRulesCheck(t *testing.T) {
	home := rulesHome(t, "")
	out, _, code := run(t, home, "rules", "check")
	if code != 0 || !strings.Contains(out, "ok   rules[0].examples[0] (kitchen-pause): allow as wanted") || !strings.Contains(out, "3 rules, 2 examples, 0 failed") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// a later deny breaks the first rule's example: check fails naming it,
	// and the config still loads (other commands warn on stderr)
	broken := rulesHome(t, `
[[rules]]
id = "quiet-kitchen"
decision = "deny"
devices = ["kitchen"]
[[rules.examples]]
task = { capability = "MEDIA_STOP", device = "kitchen" }
want = "allow"
`)
	out, _, code = run(t, broken, "rules", "check")
	for _, want := range []string{
		`FAIL rules[0].examples[0] (kitchen-pause): got deny, want allow: rule "quiet-kitchen" denies it`,
		`FAIL rules[3].examples[0] (quiet-kitchen): got deny, want allow`,
		"ok   rules[2].examples[0] (no-ads)",
		"4 rules, 3 examples, 2 failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q", want)
		}
	}
	if code != ExitCheck {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	out, _, code = run(t, broken, "rules", "check", "--json")
	var res struct {
		Examples []struct {
			Key, RuleID, Want, Got string
			OK                     bool
		}
		Failed int
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != ExitCheck || res.Failed != 2 || len(res.Examples) != 3 || res.Examples[0].OK {
		t.Fatalf("json: %d %v %s", code, err, out)
	}
	_, errs, code := run(t, broken, "rules", "list")
	if code != 0 || !strings.Contains(errs, "vigil: rules: warning: rules[0].examples[0] (kitchen-pause): got deny, want allow") {
		t.Fatalf("a config whose examples fail still loads, and says so: %d %q", code, errs)
	}
}

func TestRulesConfigErrorsExit2(t *testing.T) {
	for extra, want := range map[string]string{
		"[[rules]]\nid = \"x\"\ndecision = \"yes\"\n":                            `rules[3].decision: must be allow, ask or deny, got "yes"`,
		"[[rules]]\nid = \"no-ads\"\ndecision = \"deny\"\n":                      `rules[3].id: duplicate rule id "no-ads"`,
		"[[rules]]\nid = \"x\"\ndecision = \"deny\"\nwhen = \"hours > 1\"\n":     `rules[3].when: CEL: 1:1: undeclared reference to 'hours'`,
		"[[rules]]\nid = \"x\"\ndecision = \"deny\"\ndevices = [\"[kitchen\"]\n": `rules[3].devices[0]: is not a glob`,
	} {
		home := rulesHome(t, extra)
		for _, cmd := range [][]string{{"rules", "check"}, {"rules", "list", "--json"}} {
			_, errs, code := run(t, home, cmd...)
			if code != ExitBadInput || !strings.Contains(errs, want) || !strings.Contains(errs, "config.toml:") {
				t.Errorf("%v: exit %d, stderr %q, want %q", cmd, code, errs, want)
			}
		}
	}
}
