package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeDevicesLoad: the README's [[devices]] examples (one per
// driver) load and build their drivers, as a person would paste them;
// and the README says how to get vigil on PATH and to run vigil init.
func TestReadmeDevicesLoad(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Your own home\n")
	if !ok {
		t.Fatal(`README has no "## Your own home" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for _, want := range []string{"go install .", "scripts/release.sh", "vigil init --dir ~/vigil", "docs/start.md"} {
		if !strings.Contains(section, want) {
			t.Errorf("the section does not say %q", want)
		}
	}
	blocks := regexp.MustCompile("(?s)```toml\n(.*?)```").FindAllStringSubmatch(section, -1)
	if len(blocks) != 1 {
		t.Fatalf("%d toml blocks, want 1", len(blocks))
	}
	for _, driver := range []string{`driver = "sim"`, `driver = "mpv"`, `driver = "hass"`} {
		if !strings.Contains(blocks[0][1], driver) {
			t.Errorf("no example with %s", driver)
		}
	}
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(blocks[0][1]), 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(home, "hass-token.txt"), []byte("a-long-lived-token\n"), 0o600)
	if out, errs, code := runReal(t, home, "keys", "init"); code != 0 {
		t.Fatalf("keys init: %s%s", out, errs)
	}
	// pending builds the engine: every device's driver from its entry
	if out, errs, code := runReal(t, home, "pending"); code != 0 {
		t.Fatalf("the README's devices do not load: exit %d\n%s%s", code, out, errs)
	}
	if out, _, _ := runReal(t, home, "config", "show", "--json"); !strings.Contains(out, "media_player.kitchen") {
		t.Fatalf("config show: %s", out)
	}
}
