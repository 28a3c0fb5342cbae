package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/internal/testbin"
)

const unitFile = "../deploy/vigil.service"

// unitLines reads a systemd unit's Key=Value lines, each key's values in
// order, under "Section.Key".
func unitLines(t *testing.T, path string) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	kv := map[string][]string{}
	section := ""
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]"):
			section = strings.Trim(l, "[]")
		default:
			k, v, ok := strings.Cut(l, "=")
			if !ok {
				t.Fatalf("%s: %q is not Key=Value", path, l)
			}
			kv[section+"."+k] = append(kv[section+"."+k], v)
		}
	}
	return kv
}

// TestUnitRunsServeAsItsOwnAccount: deploy/vigil.service runs vigil serve
// as its own account on a 0700 state folder that is its home, with the
// gate's listeners, hardened, and every flag of ExecStart is one serve has.
func TestUnitRunsServeAsItsOwnAccount(t *testing.T) {
	kv := unitLines(t, unitFile)
	one := func(key string) string {
		t.Helper()
		if v := kv[key]; len(v) == 1 {
			return v[0]
		}
		t.Fatalf("%s: want one %s, got %q", unitFile, key, kv[key])
		return ""
	}
	if user := kv["Service.User"]; !(len(user) == 1 && user[0] != "root" && user[0] != "") &&
		!slices.Equal(kv["Service.DynamicUser"], []string{"yes"}) {
		t.Fatalf("%s: no User= of its own (or DynamicUser=yes): %q", unitFile, user)
	}
	for key, want := range map[string]string{
		"Service.StateDirectory": "vigil", "Service.StateDirectoryMode": "0700", "Service.UMask": "0077",
		"Service.Environment": "VIGIL_HOME=/var/lib/vigil", "Service.NoNewPrivileges": "yes",
		"Service.ProtectSystem": "strict", "Service.ProtectHome": "read-only", "Service.PrivateTmp": "yes",
		"Service.ReadWritePaths": "/var/lib/vigil", "Service.KillSignal": "SIGTERM",
		"Service.RestartPreventExitStatus": strconv.Itoa(ExitBadInput), "Install.WantedBy": "multi-user.target",
	} {
		if got := one(key); got != want {
			t.Errorf("%s: %s=%s, want %s", unitFile, key, got, want)
		}
	}
	argv := strings.Fields(one("Service.ExecStart"))
	if len(argv) < 2 || argv[0] != "/usr/local/bin/vigil" || argv[1] != "serve" {
		t.Fatalf("%s: ExecStart=%q does not run vigil serve", unitFile, argv)
	}
	for _, want := range []string{"--ssh", "--mcp"} {
		if !slices.Contains(argv, want) {
			t.Errorf("%s: ExecStart has no %s: agents and operators could not reach the gate", unitFile, want)
		}
	}
	serve := newServeCmd(NewApp())
	for _, a := range argv[2:] {
		if name, ok := strings.CutPrefix(a, "--"); ok && serve.Flags().Lookup(name) == nil {
			t.Errorf("%s: ExecStart's %s is not a flag of vigil serve", unitFile, a)
		}
	}
}

// TestUnitVerifies: systemd-analyze verify takes the unit without a word
// (an unknown key is only a warning: any line about the file fails the
// test), with ExecStart pointing at a vigil built here; and its offline
// security review rates it OK (exposure below 3).
func TestUnitVerifies(t *testing.T) {
	analyze := testbin.Tool(t, "systemd-analyze") // under CI=true a missing one fails the test

	b, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(t.TempDir(), "vigil.service")
	text := strings.ReplaceAll(string(b), "/usr/local/bin/vigil", testbin.Vigil(t))
	if err := os.WriteFile(unit, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", unit).CombinedOutput()
	if err != nil || strings.Contains(string(out), "vigil.service") {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	out, err = exec.Command(analyze, "security", "--offline=true", unit).CombinedOutput()
	if err != nil && strings.Contains(string(out), "offline") {
		t.Logf("systemd-analyze security --offline is not supported here: %s", out)
		return
	}
	m := regexp.MustCompile(`Overall exposure level for vigil.service: ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	if level, _ := strconv.ParseFloat(string(m[1]), 64); level >= 3 {
		t.Fatalf("systemd-analyze security rates the unit's exposure %.1f, want below 3\n%s", level, out)
	}
	t.Logf("systemd-analyze security: exposure %s", m[1])
}
