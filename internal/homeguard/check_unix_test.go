//go:build unix

package homeguard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// home makes a tight home (0700, config 0600, keys/ 0700) under a fresh
// 0700 folder and returns its parts.
func home(t *testing.T) (root, state, config, keys string) {
	t.Helper()
	root = t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	state = filepath.Join(root, "home")
	keys = filepath.Join(state, "keys")
	config = filepath.Join(state, "config.toml")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return root, state, config, keys
}

func check(t *testing.T, own ...string) []Problem {
	t.Helper()
	ps, err := Check(os.Getuid(), own)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func chmod(t *testing.T, p string, m os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, m); err != nil {
		t.Fatal(err)
	}
}

// asRoot skips t where chown is not allowed, except under CI (which runs
// as root: there a skip would hide the test).
func asRoot(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 && os.Getenv("CI") != "true" {
		t.Skip("chown to another account needs root")
	}
}

func TestTightHomePasses(t *testing.T) {
	_, state, config, keys := home(t)
	if ps := check(t, state, config, keys, filepath.Join(state, "tasks"), filepath.Join(state, "audit.log")); len(ps) != 0 {
		t.Fatalf("a tight home under TempDir (sticky /tmp): %s", Join(ps))
	}
}

func TestLooseFilesOfTheHomeFail(t *testing.T) {
	for _, c := range []struct {
		name, want string
		mode       os.FileMode
		pick       func(state, config, keys string) string
	}{
		{"group-writable home", "its group may write it", 0o770, func(s, _, _ string) string { return s }},
		{"world-writable config", "its group and everyone may write it", 0o666, func(_, c, _ string) string { return c }},
		{"other-writable keys", "everyone may write it", 0o703, func(_, _, k string) string { return k }},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, state, config, keys := home(t)
			p := c.pick(state, config, keys)
			chmod(t, p, c.mode)
			ps := check(t, state, config, keys)
			if len(ps) != 1 || ps[0].Path != p || ps[0].Parent || !strings.Contains(ps[0].Why, c.want) ||
				ps[0].Fix != "chmod go-w "+p || !strings.Contains(ps[0].String(), p+" ("+ps[0].Mode.String()+") owned by ") {
				t.Fatalf("%s: %#v", c.name, ps)
			}
		})
	}
}

func TestLooseParentFailsUnlessSticky(t *testing.T) {
	root, state, config, _ := home(t)
	chmod(t, root, 0o777)
	ps := check(t, state, config)
	if len(ps) != 1 || ps[0].Path != root || !ps[0].Parent || ps[0].Fix != "chmod go-w "+root ||
		!strings.Contains(ps[0].Why, "rename the home away") {
		t.Fatalf("a 0777 parent: %#v", ps)
	}
	chmod(t, root, 0o777|os.ModeSticky)
	if ps := check(t, state, config); len(ps) != 0 {
		t.Fatalf("a sticky 1777 parent, as /tmp: %s", Join(ps))
	}
}

func TestMissingPathsAreSkipped(t *testing.T) {
	_, state, _, _ := home(t)
	if ps := check(t, filepath.Join(state, "results"), filepath.Join(state, "nope", "deeper")); len(ps) != 0 {
		t.Fatalf("missing paths: %s", Join(ps))
	}
}

// TestSymlinkTargetIsChecked: a home reached through a link in a tight
// folder is judged where it really is, under a loose folder.
func TestSymlinkTargetIsChecked(t *testing.T) {
	root, state, _, _ := home(t)
	loose := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(loose, 0o700); err != nil {
		t.Fatal(err)
	}
	chmod(t, loose, 0o777)
	real := filepath.Join(loose, "home")
	if err := os.Rename(state, real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, state); err != nil {
		t.Fatal(err)
	}
	ps := check(t, state)
	if len(ps) != 1 || ps[0].Path != loose || !ps[0].Parent {
		t.Fatalf("a home linked from %s into %s: %#v", root, loose, ps)
	}
}

func TestOtherAccountsOwnershipFails(t *testing.T) {
	asRoot(t)
	root, state, config, _ := home(t)
	const stranger = 54321
	if err := os.Chown(config, stranger, stranger); err != nil {
		t.Fatal(err)
	}
	ps := check(t, state, config)
	if len(ps) != 1 || ps[0].Path != config || ps[0].UID != stranger || ps[0].Parent ||
		ps[0].Fix != "chown "+Account(os.Getuid())+" "+config || !strings.Contains(ps[0].String(), "owned by uid 54321") {
		t.Fatalf("a config owned by uid %d: %#v", stranger, ps)
	}
	if err := os.Chown(config, os.Getuid(), os.Getgid()); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(root, stranger, stranger); err != nil {
		t.Fatal(err)
	}
	ps = check(t, state, config)
	if len(ps) != 1 || ps[0].Path != root || !ps[0].Parent || !strings.Contains(ps[0].Why, "owned by another account") {
		t.Fatalf("a parent owned by uid %d: %#v", stranger, ps)
	}
}

func TestCanWrite(t *testing.T) {
	_, state, _, _ := home(t)
	if !CanWrite(state) {
		t.Fatal("the owner cannot write its home")
	}
	if CanWrite(filepath.Join(state, "missing")) {
		t.Fatal("a missing path is writable")
	}
}

func TestServiceAccount(t *testing.T) {
	passwd := filepath.Join(t.TempDir(), "passwd")
	lines := "root:x:0:0:root:/root:/bin/bash\nvigil:x:998:998::/var/lib/vigil:/usr/sbin/nologin\n" +
		"old:x:997:997::/:/bin/false\nbroken:x:996\n"
	if err := os.WriteFile(passwd, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	for uid, want := range map[int]bool{0: false, 998: true, 997: true, 996: false, 1000: false} {
		if got := serviceAccount(uid, passwd); got != want {
			t.Errorf("uid %d: service account %v, want %v", uid, got, want)
		}
	}
}

// BenchmarkCheck is the cost vigil serve pays once at start: a home's
// eight paths and the folders above them.
func BenchmarkCheck(b *testing.B) {
	root := b.TempDir()
	state := filepath.Join(root, "home")
	var own []string
	for _, p := range []string{"", "keys", "tasks", "results", "inbox"} {
		own = append(own, filepath.Join(state, p))
		if err := os.MkdirAll(filepath.Join(state, p), 0o700); err != nil {
			b.Fatal(err)
		}
	}
	for _, f := range []string{"config.toml", "audit.log"} {
		own = append(own, filepath.Join(state, f))
		if err := os.WriteFile(filepath.Join(state, f), nil, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if ps, err := Check(os.Getuid(), own); err != nil || len(ps) != 0 {
			b.Fatal(err, ps)
		}
	}
}
