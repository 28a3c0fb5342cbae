package panetest

import "testing"

func TestKeysSpellAsKeyMatchesReadsThem(t *testing.T) {
	for _, s := range []string{"j", "G", "/", "enter", "esc", "shift+tab", "ctrl+r", "alt+2", "pgdown", "up", "space"} {
		if got := Key(s).String(); got != s {
			t.Errorf("Key(%q).String() = %q", s, got)
		}
	}
	if got := len(Typed("héllo")); got != 5 {
		t.Fatalf("Typed gave %d presses", got)
	}
}
