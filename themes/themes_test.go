package themes

import (
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
)

func TestPalettesDistinctTokens(t *testing.T) {
	for _, name := range Names {
		p, err := Palettes(name)
		if err != nil {
			t.Fatal(err)
		}
		// secrets and errors must never look like ordinary text or each other
		if p.Masked == p.Text || p.Error == p.Text || p.Masked == p.Error || p.Highlight == p.Text {
			t.Fatalf("%s: masked/error/highlight tokens not distinct", name)
		}
	}
	if _, err := Palettes("neon"); err == nil || !strings.Contains(err.Error(), "neon") {
		t.Fatalf("unknown theme must name the value, got %v", err)
	}
}

func TestResolveAuto(t *testing.T) {
	if got := Resolve("auto", true).Palette.Name; got != "dark" {
		t.Fatalf("auto on dark background = %s", got)
	}
	if got := Resolve("", false).Palette.Name; got != "light" {
		t.Fatalf("auto on light background = %s", got)
	}
	if got := Resolve("high-contrast", false).Palette.Name; got != "high-contrast" {
		t.Fatalf("explicit theme ignored: %s", got)
	}
}

// NO_COLOR is honoured by the colour profile the program writes through.
func TestNoColorProfile(t *testing.T) {
	env := []string{"TERM=xterm-256color", "NO_COLOR=1"}
	if p := colorprofile.Env(env); p > colorprofile.Ascii {
		t.Fatalf("NO_COLOR gave profile %v, want Ascii or lower", p)
	}
	s := New(mustPalette(t, "dark"))
	var b strings.Builder
	w := &colorprofile.Writer{Forward: &b, Profile: colorprofile.Ascii}
	w.WriteString(s.Err.Render("boom") + s.Masked.Render("********"))
	if strings.Contains(b.String(), "38;2") {
		t.Fatalf("colour escape survived NO_COLOR: %q", b.String())
	}
}

func mustPalette(t *testing.T, n string) Palette {
	p, err := Palettes(n)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
