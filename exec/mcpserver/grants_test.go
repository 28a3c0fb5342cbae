package mcpserver

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/task"
)

// alphaGrants: alpha may pause and stop both devices, and play on the
// living room from media.example.com and *.cdn.example; beta has none.
var alphaGrants = []config.AgentConfig{
	{Name: "alpha", LeaseTTL: config.Duration{Duration: 5 * time.Minute}, Grants: []config.GrantConfig{
		{Capabilities: []string{"MEDIA_PAUSE", "MEDIA_STOP"}, Devices: []string{"kitchen", "living-room"}},
		{Capabilities: []string{"MEDIA_PLAY"}, Devices: []string{"living-room"}, MediaHosts: []string{"media.example.com", "*.cdn.example"}},
	}},
	{Name: "beta"},
}

// grantsFixture is newFixture's queue with a kitchen too, served over
// HTTP with the agents' tokens, alpha's grants minted with the home's
// issuer key.
func grantsFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	env := approvaltest.New(t, config.DeviceConfig{ID: "kitchen", Driver: "sim"})
	d := memDeps(t)
	d.Queue, d.Audit, d.Now, d.Poll = env.Queue, env.Audit, env.Clock.Now, 20*time.Millisecond
	d.Grants = &Grants{Agents: alphaGrants, Devices: []string{"living-room", "kitchen"}, Key: env.Issuer, KID: lease.LocalIssuerKID}
	f := &fixture{env: env, deps: d, srv: New(d)}
	return f, agentsServer(t, f)
}

func callTool(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return res, structured(t, res)
}

// entries is the audit log, one map per line.
func entries(t *testing.T, f *fixture) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(f.env.AuditPath())
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// A granted pause without a lease: Vigil mints one for exactly that task,
// audits lease_issued (no token in it) before submitted, and the task is
// pending as alpha's, its deadline the minted lease's exp; the same call
// again is the same task, its new lease kept out of the task's trail.
func TestGrantMintsTheLease(t *testing.T) {
	f, url := grantsFixture(t)
	alpha := connectAs(t, url, alphaToken, "claude")
	res, sc := callTool(t, alpha, "media_pause", map[string]any{"task_id": "pause-1", "target_device": "kitchen", "wait_seconds": 0})
	exp := f.env.Clock.Now().Add(5 * time.Minute).UTC().Format(time.RFC3339)
	if res.IsError || sc["state"] != "pending" || sc["expires_at"] != exp {
		t.Fatalf("granted pause: %s", text(res))
	}
	rec, err := f.env.Queue.Get("pause-1")
	if err != nil || rec.Agent != "agent:alpha" || rec.State != approval.Pending || rec.CapabilityID != "MEDIA_PAUSE" {
		t.Fatalf("the task: %+v %v", rec, err)
	}
	all := entries(t, f)
	issued, submitted := all[len(all)-2], all[len(all)-1]
	if issued["event"] != EventLeaseIssued || submitted["event"] != "submitted" || submitted["task_id"] != "pause-1" {
		t.Fatalf("audit order: %v then %v", issued["event"], submitted["event"])
	}
	var det map[string]any
	_ = json.Unmarshal(mustJSON(issued["details"]), &det)
	if issued["actor"] != "agent:alpha" || issued["task_id"] != "pause-1" || issued["capability"] != "MEDIA_PAUSE" ||
		issued["target"] != "kitchen" || issued["token_jti"] == "" || issued["token_jti"] != submitted["token_jti"] ||
		det["agent"] != "alpha" || det["device"] != "kitchen" || det["jti"] != issued["token_jti"] || det["exp"] != exp ||
		det["grant"] != float64(0) {
		t.Fatalf("lease_issued: %v", issued)
	}
	if line := string(mustJSON(issued)); strings.Contains(line, "eyJ") {
		t.Fatalf("the token is in the audit log: %s", line)
	}
	// the lease the task holds is the minted one, bound to this task
	if rec.TokenJTI != issued["token_jti"] {
		t.Fatalf("the task's jti %q is not the minted lease's %v", rec.TokenJTI, issued["token_jti"])
	}
	c, _ := leaseClaims(storedManifest(t, f, "pause-1").Lease)
	if c.Subject != "agent:alpha" || c.TaskID != "pause-1" || len(c.Caps) != 1 || c.Caps[0] != "MEDIA_PAUSE" ||
		c.Constraints == nil || len(c.Constraints.Devices) != 1 || c.Constraints.Devices[0] != "kitchen" ||
		c.ExpiresAt.Sub(c.IssuedAt.Time) != 5*time.Minute || c.ID != issued["token_jti"] {
		t.Fatalf("minted claims: %+v", c)
	}

	res, sc = callTool(t, alpha, "media_pause", map[string]any{"task_id": "pause-1", "target_device": "kitchen", "wait_seconds": 0})
	if res.IsError || sc["state"] != "pending" {
		t.Fatalf("the same call again: %s", text(res))
	}
	all = entries(t, f)
	if again := all[len(all)-1]; again["event"] != EventLeaseIssued || again["task_id"] != "" ||
		!strings.Contains(string(mustJSON(again["details"])), `"reused_task_id":"pause-1"`) {
		t.Fatalf("a repeat's lease entered the task's trail: %v", again)
	}

	// an empty or null lease is no lease
	for _, empty := range []any{"", nil} {
		res, sc = callTool(t, alpha, "media_stop", map[string]any{"task_id": "stop-" + fmt.Sprint(empty != nil), "target_device": "living-room",
			"lease": empty, "wait_seconds": 0})
		if res.IsError || sc["state"] != "pending" {
			t.Fatalf("lease %q: %s", empty, text(res))
		}
	}

	// play from a granted host, through a glob
	res, sc = callTool(t, alpha, "media_play", map[string]any{"task_id": "play-1", "target_device": "living-room",
		"media_uri": "https://a.cdn.example/song.mp3", "wait_seconds": 0})
	if res.IsError || sc["state"] != "pending" {
		t.Fatalf("granted play: %s", text(res))
	}
	all = entries(t, f)
	if !strings.Contains(string(mustJSON(all[len(all)-2]["details"])), `"media_host":"a.cdn.example"`) {
		t.Fatalf("lease_issued for play names no host: %v", all[len(all)-2])
	}
}

// storedManifest is the manifest the queue keeps for a task.
func storedManifest(t *testing.T, f *fixture, id string) *task.Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.env.TasksDir(), id, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := task.ParseManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func decodeSegment(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }
func encodeSegment(b []byte) string          { return base64.RawURLEncoding.EncodeToString(b) }

// leaseClaims reads a token's claims (the test trusts its own queue).
func leaseClaims(tok string) (*lease.Claims, error) {
	var c lease.Claims
	p := strings.Split(tok, ".")
	if len(p) != 3 {
		return &c, errors.New("not a JWT")
	}
	b, err := decodeSegment(p[1])
	if err != nil {
		return &c, err
	}
	return &c, json.Unmarshal(b, &c)
}

// A call no grant covers is INVALID_LEASE naming what is not granted,
// audited as the queue's refusals are, and nothing is submitted: another
// device, another capability, another host, a local file, an agent with
// no grants.
func TestGrantRefusesWhatIsNotGranted(t *testing.T) {
	f, url := grantsFixture(t)
	alpha := connectAs(t, url, alphaToken, "claude")
	beta := connectAs(t, url, betaToken, "claude")
	for _, c := range []struct {
		name string
		cs   *mcp.ClientSession
		tool string
		args map[string]any
		want string
	}{
		{"device", alpha, "media_play", map[string]any{"target_device": "kitchen", "media_uri": "https://media.example.com/a.mp3"},
			"agent alpha has no grant for MEDIA_PLAY on kitchen from host media.example.com"},
		{"capability", alpha, "media_seek", map[string]any{"target_device": "kitchen", "position_seconds": 30},
			"agent alpha has no grant for MEDIA_SEEK on kitchen"},
		{"host", alpha, "media_play", map[string]any{"target_device": "living-room", "media_uri": "https://ads.example/a.mp3"},
			"agent alpha has no grant for MEDIA_PLAY on living-room from host ads.example"},
		{"host suffix without its dot", alpha, "media_play", map[string]any{"target_device": "living-room", "media_uri": "https://evilcdn.example/a.mp3"},
			"from host evilcdn.example"},
		{"unicode host named in punycode", alpha, "media_play", map[string]any{"target_device": "living-room", "media_uri": "https://bücher.example/a.mp3"},
			"from host xn--bcher-kva.example"},
		{"userinfo naming a granted host", alpha, "media_play", map[string]any{"target_device": "living-room", "media_uri": "https://media.example.com@ads.example/a.mp3"},
			"from host ads.example"},
		{"granted host as a subdomain of another", alpha, "media_play", map[string]any{"target_device": "living-room", "media_uri": "https://media.example.com.ads.example/a.mp3"},
			"from host media.example.com.ads.example"},
		{"local file", alpha, "media_play", map[string]any{"target_device": "living-room", "media_uri": "/music/a.mp3"},
			"from a media_uri without a host"},
		{"no grants", beta, "media_pause", map[string]any{"target_device": "kitchen"},
			"agent beta has no grant for MEDIA_PAUSE on kitchen"},
	} {
		id := "refused-" + strings.ReplaceAll(c.name, " ", "-")
		c.args["task_id"], c.args["wait_seconds"] = id, 0
		res, sc := callTool(t, c.cs, c.tool, c.args)
		e, _ := sc["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if !res.IsError || sc["state"] != "rejected" || e["code"] != string(task.InvalidLease) || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %s\nwant …%s…", c.name, text(res), c.want)
			continue
		}
		if _, err := f.env.Queue.Get(id); !errors.Is(err, approval.ErrNotFound) {
			t.Errorf("%s: a task was made: %v", c.name, err)
		}
		if last := lastEntry(t, f); last["event"] != "rejected" || last["task_id"] != id || last["error_code"] != "INVALID_LEASE" ||
			!strings.HasPrefix(last["actor"].(string), "agent:") {
			t.Errorf("%s: audit: %v", c.name, last)
		}
	}
	for _, e := range entries(t, f) {
		if e["event"] == EventLeaseIssued {
			t.Fatalf("a lease was minted for a refused call: %v", e)
		}
	}
	// inputs that are wrong are named as the queue names them, no lease minted
	res, _ := callTool(t, alpha, "media_pause", map[string]any{"task_id": "bad-dev", "target_device": "garage", "wait_seconds": 0})
	if !res.IsError || !strings.Contains(text(res), `target_device`) || strings.Contains(text(res), "grant") {
		t.Fatalf("unknown device: %s", text(res))
	}
}

// A lease that is given goes the old way (no minting, the queue checks
// it), and the shared token without a lease is refused by the queue as
// before: the grants are the token's agent's, never anyone's.
func TestGrantLeavesOtherCallsAlone(t *testing.T) {
	f, url := grantsFixture(t)
	alpha := connectAs(t, url, alphaToken, "claude")
	args := leaseFor(t, f, "own-lease", "agent:alpha")
	args["target_device"], args["media_uri"] = "living-room", "/music/a.mp3" // no grant covers a local file
	res, sc := callTool(t, alpha, "media_play", args)
	if res.IsError || sc["state"] != "pending" {
		t.Fatalf("alpha's own lease: %s", text(res))
	}
	if m := storedManifest(t, f, "own-lease"); m.Lease != args["lease"] {
		t.Fatal("the given lease was replaced")
	}
	shared := connectAs(t, url, sharedToken, "anyone")
	res, sc = callTool(t, shared, "media_pause", map[string]any{"task_id": "shared-1", "target_device": "kitchen", "wait_seconds": 0})
	e, _ := sc["error"].(map[string]any)
	if !res.IsError || sc["state"] != "rejected" || !strings.Contains(e["message"].(string), "lease") || strings.Contains(text(res), "grant") {
		t.Fatalf("shared token without a lease: %s", text(res))
	}
	for _, e := range entries(t, f) {
		if e["event"] == EventLeaseIssued {
			t.Fatalf("a lease was minted: %v", e)
		}
	}
}

// LoadGrants mints with the issuer key only when [[leases.keys]] trusts
// it, and a minted lease verifies through the verifier the engine builds
// from the config (lease.FromConfig), the code external leases go
// through; one altered after signing does not.
func TestMintedLeaseVerifiesAsAnExternalOne(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	if _, _, err := lease.InitKeys(keys, nil, false); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Devices = []config.DeviceConfig{{ID: "kitchen", Driver: "sim"}}
	cfg.Agents = alphaGrants
	keyPath := filepath.Join(keys, lease.IssuerKeyFile)
	if _, err := LoadGrants(cfg, keyPath); err == nil || !strings.Contains(err.Error(), "no [[leases.keys]] entry holds its public key") {
		t.Fatalf("untrusted issuer key: %v", err)
	}
	cfg.Leases.Keys = []config.LeaseKey{{KID: "home", Alg: lease.AlgEdDSA, PublicKey: filepath.Join(keys, lease.IssuerPubFile)}}
	g, err := LoadGrants(cfg, keyPath)
	if err != nil || g.KID != "home" || g.Issuer != cfg.Leases.Issuer || len(g.Devices) != 1 {
		t.Fatalf("grants: %+v %v", g, err)
	}
	clock := approvaltest.NewClock()
	m, te, err := g.Mint("alpha", "t-1", "MEDIA_PAUSE", json.RawMessage(`{"target_device":"kitchen"}`), clock.Now)
	if err != nil || te != nil {
		t.Fatal(err, te)
	}
	tok, claims := m.Token, m.Claims
	v, err := lease.FromConfig(cfg.Leases, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.Check(tok, lease.Request{TaskID: "t-1", CapabilityID: "MEDIA_PAUSE", Device: "kitchen"})
	if err != nil || got.ID != claims.ID || got.Subject != "agent:alpha" {
		t.Fatalf("minted lease: %+v %v", got, err)
	}
	if _, err := v.Check(tok, lease.Request{TaskID: "t-1", CapabilityID: "MEDIA_PAUSE", Device: "living-room"}); err == nil {
		t.Fatal("the lease covers another device")
	}
	p := strings.Split(tok, ".")
	body, _ := decodeSegment(p[1])
	forged := strings.Replace(string(body), `"MEDIA_PAUSE"`, `"MEDIA_PLAY"`, 1)
	tampered := p[0] + "." + encodeSegment([]byte(forged)) + "." + p[2]
	if _, err := v.Check(tampered, lease.Request{TaskID: "t-1", CapabilityID: "MEDIA_PLAY", Device: "kitchen"}); err == nil ||
		!strings.Contains(err.Error(), "signature check failed") {
		t.Fatalf("tampered lease: %v", err)
	}
	other, _, _ := lease.InitKeys(filepath.Join(dir, "other"), nil, false)
	if _, err := LoadGrants(cfg, other.Private); err == nil {
		t.Fatal("minting with a key no [[leases.keys]] entry holds")
	}

	cfg.Queue.URL = "nats://queue.example:4222"
	if _, err := LoadGrants(cfg, keyPath); err == nil || !strings.Contains(err.Error(), "[queue] url") {
		t.Fatalf("grants with a shared queue: %v", err)
	}
	cfg.Agents = []config.AgentConfig{{Name: "beta"}}
	if g, err := LoadGrants(cfg, "/nonexistent"); g != nil || err != nil {
		t.Fatalf("no grants, no minter: %v %v", g, err)
	}
}

// The config's bound on lease_ttl is `vigil lease issue`'s.
func TestLeaseTTLBoundMatchesIssue(t *testing.T) {
	if config.MaxLeaseTTL != lease.MaxIssueTTL {
		t.Fatalf("config.MaxLeaseTTL %s, lease.MaxIssueTTL %s", config.MaxLeaseTTL, lease.MaxIssueTTL)
	}
}

// BenchmarkGrantMint: the grant check and one Ed25519-signed lease, the
// work a granted call adds before the queue's own.
func BenchmarkGrantMint(b *testing.B) {
	dir := b.TempDir()
	if _, _, err := lease.InitKeys(dir, nil, false); err != nil {
		b.Fatal(err)
	}
	key, _, err := lease.LoadPrivateKey(filepath.Join(dir, lease.IssuerKeyFile))
	if err != nil {
		b.Fatal(err)
	}
	g := &Grants{Agents: alphaGrants, Devices: []string{"living-room", "kitchen"}, Key: key, KID: lease.LocalIssuerKID}
	in := json.RawMessage(`{"target_device":"living-room","media_uri":"https://a.cdn.example/song.mp3"}`)
	for b.Loop() {
		if _, te, err := g.Mint("alpha", "t-1", "MEDIA_PLAY", in, time.Now); err != nil || te != nil {
			b.Fatal(err, te)
		}
	}
}
