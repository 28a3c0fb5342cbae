//go:build linux

package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On a terminal, init lists what it would make and asks: y makes the
// home, anything else makes nothing (exit 1).
func TestInitAsksOnATerminal(t *testing.T) {
	pathWith(t, false)
	for _, c := range []struct {
		answer string
		code   int
	}{{"n\n", ExitCheck}, {"y\n", 0}} {
		dir := filepath.Join(t.TempDir(), "home")
		m, s := openPTY(t)
		if _, err := m.WriteString(c.answer); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		app := NewApp()
		app.Out, app.Err, app.In = &out, &errb, s
		app.Getenv = func(string) string { return "" }
		code := execute(context.Background(), app, []string{"init", "--dir", dir})
		if code != c.code || !strings.Contains(errb.String(), filepath.Join(dir, "config.toml")) ||
			!strings.Contains(errb.String(), "Make them? [y/N]") {
			t.Fatalf("answer %q: exit %d\n%s%s", c.answer, code, out.String(), errb.String())
		}
		_, err := os.Stat(filepath.Join(dir, "config.toml"))
		if made := err == nil; made != (c.code == 0) {
			t.Fatalf("answer %q: config made %v", c.answer, made)
		}
	}
}
