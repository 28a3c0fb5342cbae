package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/themes"
)

// A new home without keys: the Approvals pane says the command that makes
// them (for this home) instead of the engine's error, and once `vigil keys
// init` has run it opens the queue by itself, without a restart.
func TestApprovalsPaneWaitsForKeys(t *testing.T) {
	home := filepath.Join(t.TempDir(), "new home")
	app := NewApp()
	app.HomeFlag = home
	app.Getenv = func(string) string { return "" }
	if err := app.Load(); err != nil {
		t.Fatal(err)
	}
	if err := app.EnsureState(); err != nil {
		t.Fatal(err)
	}
	pal, _ := themes.Palettes("dark")
	list, closeAll, _ := buildPanes(app, themes.New(pal))
	t.Cleanup(closeAll)
	var p panes.Pane
	for _, pn := range list {
		if pn.ID() == "approvals" {
			p = pn
		}
	}
	view := func() string { return strings.Join(strings.Fields(p.View(100, 20)), " ") }
	want := "run `vigil --home '" + home + "' keys init` in a shell"
	if v := view(); !strings.Contains(v, want) || !strings.Contains(v, "no restart needed") || strings.Contains(v, "operator.key.pem") {
		t.Fatalf("the pane does not offer the command:\n%s", v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	msgs := make(chan tea.Msg, 64)
	do := func(cmd tea.Cmd) {
		if cmd != nil {
			go func() { msgs <- cmd() }()
		}
	}
	do(p.Init(ctx))
	if _, errb, code := run(t, home, "keys", "init"); code != 0 {
		t.Fatalf("vigil keys init: %d %s", code, errb)
	}
	deadline := time.After(10 * time.Second)
	for !strings.Contains(view(), "Pending approvals (0)") {
		select {
		case msg := <-msgs:
			if b, ok := msg.(tea.BatchMsg); ok {
				for _, c := range b {
					do(c)
				}
				continue
			}
			do(p.Update(msg))
		case <-deadline:
			t.Fatalf("the pane did not open the queue once the keys were made:\n%s", view())
		}
	}
}
