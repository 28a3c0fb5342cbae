package cli

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/internal/testbin"
)

// TestStampFromBuildInfo: the commit, its time and the dirty flag come from
// the vcs settings the go command writes; -ldflags values fill in only when
// the build info has none.
func TestStampFromBuildInfo(t *testing.T) {
	vcs := &debug.BuildInfo{Settings: []debug.BuildSetting{
		{Key: "-trimpath", Value: "true"},
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-11-26T02:51:15Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	cases := []struct {
		name            string
		info            *debug.BuildInfo
		ldCommit, ldMod string
		want            stamp
		printed         string
	}{
		{"build info", vcs, "", "", stamp{"0123456789abcdef0123456789abcdef01234567", "2026-11-26T02:51:15Z", true},
			"0123456789abcdef0123456789abcdef01234567 (dirty)"},
		{"build info wins over ldflags", vcs, "feedface", "false", stamp{"0123456789abcdef0123456789abcdef01234567", "2026-11-26T02:51:15Z", true},
			"0123456789abcdef0123456789abcdef01234567 (dirty)"},
		{"ldflags when no vcs", &debug.BuildInfo{}, "feedface", "false", stamp{Commit: "feedface"}, "feedface"},
		{"ldflags dirty", &debug.BuildInfo{}, "feedface", "true", stamp{Commit: "feedface", Modified: true}, "feedface (dirty)"},
		{"nothing known", nil, "", "", stamp{}, "unknown"},
	}
	for _, c := range cases {
		got := stampFrom(c.info, c.ldCommit, c.ldMod)
		if got != c.want || got.String() != c.printed {
			t.Errorf("%s: got %+v %q, want %+v %q", c.name, got, got.String(), c.want, c.printed)
		}
	}
}

// TestReleaseScriptStampsTheCommit builds with scripts/release.sh and asks
// the binary: the version given, the checkout's commit and dirty flag
// ("unknown" when the source is not a git checkout).
func TestReleaseScriptStampsTheCommit(t *testing.T) {
	testbin.FullRunOnly(t, "the release build recompiles every package (static, -trimpath)")
	out := filepath.Join(t.TempDir(), "vigil")
	if b, err := exec.Command("bash", "../scripts/release.sh", "9.9.9-test", out).CombinedOutput(); err != nil {
		t.Fatalf("release.sh: %v\n%s", err, b)
	}
	b, err := exec.Command(out, "version", "--json").Output()
	if err != nil {
		t.Fatalf("version: %v", err)
	}
	var v struct {
		Version, Commit string
		Dirty           bool
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	want, dirty := "unknown", false
	if head, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		want = strings.TrimSpace(string(head))
		st, _ := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
		dirty = len(st) > 0
	}
	if v.Version != "9.9.9-test" || v.Commit != want || v.Dirty != dirty {
		t.Fatalf("version --json = %s; want version 9.9.9-test, commit %s, dirty %v", b, want, dirty)
	}
}
