package panes

import (
	"os"
	"path/filepath"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// A stand-in wl-copy (no Wayland display runs here) that writes what it is
// given: Copy feeds it the exact text, and still sends OSC 52.
func TestClipboardFallsBackToTheSessionsTool(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "copied")
	script := "#!/bin/sh\ncat > " + out + "\n"
	if err := os.WriteFile(filepath.Join(dir, "wl-copy"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	look := func(name string) (string, error) {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			return "", err
		}
		return p, nil
	}
	env := map[string]string{"WAYLAND_DISPLAY": "wayland-0"}
	c := Clipboard{Getenv: func(k string) string { return env[k] }, LookPath: look, GOOS: "linux"}
	msg := c.Copy("src/a.go:12")()
	batch, ok := msg.(tea.BatchMsg)
	if !ok || len(batch) != 2 {
		t.Fatalf("want OSC 52 and the tool, got %T", msg)
	}
	var ran bool
	for _, cmd := range batch {
		if m, ok := cmd().(ClipboardMsg); ok {
			ran = true
			if m.Err != nil || filepath.Base(m.Tool) != "wl-copy" {
				t.Fatalf("tool run: %+v", m)
			}
		}
	}
	if !ran {
		t.Fatal("the tool was not run")
	}
	b, err := os.ReadFile(out)
	if err != nil || string(b) != "src/a.go:12" {
		t.Fatalf("the tool got %q (%v)", b, err)
	}
	// no display: OSC 52 alone, no tool is looked for
	env = map[string]string{}
	if _, ok := c.Copy("x")().(tea.BatchMsg); ok {
		t.Fatal("a tool ran without a display")
	}
}
