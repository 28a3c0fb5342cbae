package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/media"
	"github.com/vigil-dev/vigil/exec/task"
)

func TestKeysLeaseVerifyFlow(t *testing.T) {
	home := t.TempDir()
	now := func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }
	runCmd := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		app := NewApp()
		app.Out, app.Err, app.Now = &out, &errb, now
		app.Getenv = func(string) string { return "" }
		root := NewRootCmd(app)
		root.SetArgs(append([]string{"--home", home}, args...))
		err := root.ExecuteContext(context.Background())
		if err != nil {
			errb.WriteString(err.Error())
		}
		return out.String(), errb.String(), ExitCode(err)
	}
	out, errs, code := runCmd("keys", "init", "--json")
	if code != 0 {
		t.Fatalf("keys init: %d %s", code, errs)
	}
	var info map[string]map[string]string
	json.Unmarshal([]byte(out), &info)
	if !strings.HasSuffix(info["issuer"]["public_key"], "keys/issuer.pub.pem") {
		t.Fatalf("keys init output %s", out)
	}
	if _, _, code := runCmd("keys", "init"); code != 2 {
		t.Fatalf("second init exit %d", code)
	}
	tok, errs, code := runCmd("lease", "issue", "--sub", "agent-1", "--task-id", "t-1", "--cap", "MEDIA_PAUSE", "--device", "tv")
	if code != 0 {
		t.Fatalf("lease issue: %d %s", code, errs)
	}
	tok = strings.TrimSpace(tok)
	k, _, _ := lease.LocalIssuer(filepath.Join(home, "keys"))
	v, _ := lease.NewVerifier(lease.Options{Keys: []lease.Key{k}, Now: now})
	if _, err := v.Check(tok, lease.Request{TaskID: "t-1", CapabilityID: "MEDIA_PAUSE", Device: "tv"}); err != nil {
		t.Fatal(err)
	}
	// Execute a task and verify its stored result through the CLI.
	signer, _ := task.LoadSigner(filepath.Join(home, "keys", lease.OperatorKeyFile))
	st, _ := task.OpenStore(filepath.Join(home, "results"))
	ex, err := media.New(media.Options{Devices: []config.DeviceConfig{{ID: "tv", Driver: "sim"}}, Leases: v, Store: st, Signer: signer, Now: now, SimDir: filepath.Join(home, "devices")})
	if err != nil {
		t.Fatal(err)
	}
	m, err := task.ParseManifest([]byte(`{"task_id":"t-1","capability_id":"MEDIA_PAUSE","inputs":{"target_device":"tv"},"lease":"` + tok + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ex.Execute(context.Background(), m, &media.Approval{TaskID: "t-1", PreviewHash: "p", DecidedBy: "operator:me", DecidedAt: now()})
	if err != nil || r.Status != "SUCCESS" {
		t.Fatalf("%v %+v", err, r)
	}
	out, errs, code = runCmd("result", "verify", st.Path("t-1"))
	if code != 0 || !strings.HasPrefix(out, "OK: t-1 (MEDIA_PAUSE, SUCCESS)") {
		t.Fatalf("verify: %d %q %q", code, out, errs)
	}
	data, _ := os.ReadFile(st.Path("t-1"))
	bad := filepath.Join(home, "bad.json")
	os.WriteFile(bad, bytes.Replace(data, []byte(`"applied"`), []byte(`"applies"`), 1), 0o600)
	out, errs, code = runCmd("result", "verify", "--json", bad)
	if code != 1 || !strings.Contains(out, `"valid": false`) {
		t.Fatalf("tampered verify: %d %q %q", code, out, errs)
	}
	os.WriteFile(bad, []byte("nope"), 0o600)
	if _, _, code = runCmd("result", "verify", bad); code != 2 {
		t.Fatalf("garbage verify exit %d", code)
	}
	t.Log(errs)
}
