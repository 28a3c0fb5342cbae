package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/lease"
	approvalspane "github.com/vigil-dev/vigil/panes/approvals"
	"github.com/vigil-dev/vigil/preview"
	"github.com/vigil-dev/vigil/themes"
)

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

func randFrom(r *rand.Rand, set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[r.IntN(len(set))]
	}
	return string(b)
}

func luhnCard(r *rand.Rand) string {
	d := make([]int, 16)
	d[0] = 4
	for i := 1; i < 15; i++ {
		d[i] = r.IntN(10)
	}
	sum := 0
	for i := 14; i >= 0; i-- {
		v := d[i]
		if (14-i)%2 == 0 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	d[15] = (10 - sum%10) % 10
	var b strings.Builder
	for i, x := range d {
		if i > 0 && i%4 == 0 {
			b.WriteByte('-')
		}
		b.WriteByte(byte('0' + x))
	}
	return b.String()
}

// secret makes one secret of kind k and the query parameter that carries it.
func secret(r *rand.Rand, k int) (param, value string) {
	switch k % 8 {
	case 0:
		return "k", "sk_live_" + randFrom(r, alnum, 24)
	case 1:
		return "gh", "ghp_" + randFrom(r, alnum, 36)
	case 2:
		return "aws", "AKIA" + randFrom(r, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
	case 3:
		return "api_key", randFrom(r, alnum, 32)
	case 4:
		return "c", luhnCard(r)
	case 5:
		return "s", fmt.Sprintf("%03d-%02d-%04d", 100+r.IntN(500), 10+r.IntN(89), 1000+r.IntN(8999))
	case 6:
		return "jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI" + randFrom(r, alnum, 20) + "In0." + randFrom(r, alnum, 43)
	default:
		return "password", randFrom(r, alnum, 14)
	}
}

// TestNoSecretLeavesTheEngine places 10,000 generated secrets in media URIs
// (userinfo and query) and denial reasons, then checks that none appears in
// preview JSON, CLI output, the rendered Approvals pane, slog output or the
// audit log. The fast lane (-short) places 2,000 in 50 tasks.
func TestNoSecretLeavesTheEngine(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.toml"), []byte(`[[leases.keys]]
kid = "local"
alg = "EdDSA"
public_key = "keys/issuer.pub.pem"
[[devices]]
id = "living-room"
driver = "sim"
`), 0o600)
	if _, errs, code := run(t, home, "keys", "init"); code != 0 {
		t.Fatal(errs)
	}
	var logs bytes.Buffer
	app := NewApp()
	app.HomeFlag, app.Out, app.Err = home, &bytes.Buffer{}, &bytes.Buffer{}
	app.Log = slog.New(preview.NewMaskingHandler(slog.NewTextHandler(&logs, nil)))
	if err := app.Load(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	eng, err := app.Engine(ctx)
	if err != nil {
		t.Fatal(err)
	}
	issuer, _, err := lease.LoadPrivateKey(filepath.Join(home, "keys", lease.IssuerKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var secrets []string
	tasks, perTask := 250, 40
	if testing.Short() {
		tasks = 50
	}
	for i := 0; i < tasks; i++ {
		pw := randFrom(r, alnum, 12)
		secrets = append(secrets, pw)
		q := []string{}
		for k := 1; k < perTask; k++ {
			name, v := secret(r, k)
			secrets = append(secrets, v)
			q = append(q, fmt.Sprintf("%s%d=%s", name, k, v))
			if name == "password" || name == "api_key" {
				q[len(q)-1] = fmt.Sprintf("%s=%s", name, v)
			}
		}
		uri := fmt.Sprintf("https://ada:%s@media.example.com/v/%d.m3u8?%s", pw, i, strings.Join(q, "&"))
		id := fmt.Sprintf("leak-%03d", i)
		tok, err := lease.Issue(issuer, lease.IssueOptions{Subject: "agent:leaky", TaskID: id, Caps: []string{"MEDIA_PLAY"}, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(map[string]any{"task_id": id, "capability_id": "MEDIA_PLAY", "lease": tok,
			"inputs": map[string]any{"media_uri": uri, "target_device": "living-room"}})
		out, err := eng.Queue.Submit(ctx, raw, "cli")
		if err != nil || out.State != "pending" {
			t.Fatalf("%s: %+v %v", id, out, err)
		}
		app.Log.Info("submitted", "task_id", id, "media_uri", uri)
	}
	if len(secrets) != tasks*perTask {
		t.Fatalf("%d secrets", len(secrets))
	}
	var seen strings.Builder
	// preview JSON and CLI output
	for i := 0; i < tasks; i++ {
		id := fmt.Sprintf("leak-%03d", i)
		v, err := eng.Queue.Preview(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(previewJSON(v))
		seen.Write(b)
		writePreview(&seen, v)
	}
	for _, args := range [][]string{{"pending", "--json"}, {"pending"}, {"preview", "leak-007", "--json"}, {"preview", fmt.Sprintf("leak-%03d", min(123, tasks-1))}} {
		out, errs, _ := run(t, home, args...)
		seen.WriteString(out + errs)
	}
	// the rendered pane, on each task in turn
	pal, _ := themes.Palettes("dark")
	// no watchers and a tick that never comes: every command drain meets
	// answers (a loaded preview) or never does, so drain can wait long
	p := approvalspane.New(approvalspane.Options{Queue: eng.Queue, Operator: "operator:test", Now: func() time.Time { return time.Now().Add(time.Hour) },
		Tick: 24 * time.Hour}, themes.New(pal))
	t.Cleanup(p.Close) // its feed of the queue's changes ends before the home is removed
	drain(p, p.Init(context.Background()))
	var pane strings.Builder
	for i := 0; i < tasks; i++ {
		for _, j := range []int{0, 1, 2, 3} { // scroll through the whole preview
			pane.WriteString(p.View(120, 40))
			for k := 0; k < 3*j; k++ {
				p.Update(tea.KeyPressMsg{Code: 'J', Text: "J"})
			}
		}
		drain(p, p.Update(tea.KeyPressMsg{Code: 'j', Text: "j"}))
	}
	// styles may split the masked URL (the mask is marked), so look at the text as shown
	if !strings.Contains(ansi.Strip(pane.String()), fmt.Sprintf("ada:********@media.example.com/v/%d.m3u8", tasks-1)) {
		t.Fatal("the pane never rendered the last task's preview")
	}
	seen.WriteString(pane.String())
	// denials with secrets in their reasons reach the audit log masked
	for i := 0; i < tasks; i += 5 {
		id := fmt.Sprintf("leak-%03d", i)
		reason := "because " + secrets[i*perTask+1] + " and " + secrets[i*perTask+4]
		if _, _, err := eng.Queue.Decide(ctx, id, approval.Decision{By: "operator:test", Reason: reason}); err != nil {
			t.Fatal(err)
		}
	}
	auditLog, _ := os.ReadFile(app.Paths.Audit)
	results, _ := os.ReadDir(app.Paths.Results)
	for _, e := range results {
		b, _ := os.ReadFile(filepath.Join(app.Paths.Results, e.Name()))
		seen.Write(b)
	}
	seen.Write(auditLog)
	seen.Write(logs.Bytes())
	all := seen.String()
	if !strings.Contains(all, "********") || !strings.Contains(string(auditLog), "denied") {
		t.Fatal("the outputs were not produced")
	}
	for _, s := range secrets {
		if strings.Contains(all, s) {
			t.Fatalf("secret %q leaked", s)
		}
	}
}

// drain runs a command and feeds its messages back, skipping the ones that
// wait on the clock or the file system.
func drain(p *approvalspane.Pane, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	select {
	case msg := <-done:
		switch m := msg.(type) {
		case tea.BatchMsg:
			for _, c := range m {
				drain(p, c)
			}
		case nil:
		default:
			drain(p, p.Update(m))
		}
	case <-time.After(2 * time.Second): // the tick, which never comes: not needed here
	}
}
