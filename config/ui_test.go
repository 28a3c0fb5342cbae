package config

import (
	"testing"
)

// [ui] mouse: on unless the file turns it off; anything but a bool is
// refused naming the key, its line and the rule.
func TestUIMouse(t *testing.T) {
	for _, tc := range []struct {
		name, toml string
		want       bool
		err        string
	}{
		{"default on", "", true, ""},
		{"off", "[ui]\nmouse = false\n", false, ""},
		{"on", "[ui]\nmouse = true\n", true, ""},
		{"a string", "[ui]\nmouse = \"no\"\n", true, "config.toml:2: ui.mouse: must be true or false, got a string"},
		{"a number", "[ui]\n\nmouse = 0\n", true, "config.toml:3: ui.mouse: must be true or false, got an integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Default()
			err := Parse([]byte(tc.toml), "config.toml", &cfg)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.UI.Mouse != tc.want {
				t.Fatalf("mouse %v, want %v", cfg.UI.Mouse, tc.want)
			}
		})
	}
}
