package approvalspane

import (
	"bytes"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/ui"
)

// A pane with no queue yet (a new home without keys) says why and tries
// Reopen every tick: once it opens, the queue shows without a restart, and
// what Reopen said while it failed replaces the first error.
func TestPaneOpensTheQueueOnceItCan(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("waiting", "/media/a.mkv"))
	var ready atomic.Bool
	var tries atomic.Int32
	p := New(Options{Operator: "operator:ada", Now: env.Clock.Now, Tick: 20 * time.Millisecond,
		QueueErr: errors.New("this home has no keys yet: run `vigil keys init`"),
		Reopen: func() (Options, error) {
			tries.Add(1)
			if !ready.Load() {
				return Options{}, errors.New("still no keys: run `vigil keys init`")
			}
			return Options{Queue: env.Queue, DecisionsRefused: "decisions here need an operator key"}, nil
		}}, styles())
	t.Cleanup(p.Close)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	s := &session{t: t, env: env, tm: tm}
	s.waitFn(func(b []byte) bool {
		return bytes.Contains(b, []byte("no restart needed")) && bytes.Contains(b, []byte("still no keys"))
	})
	ready.Store(true)
	s.waitFn(func(b []byte) bool { // the queue's task, and what the opened options say
		return bytes.Contains(b, []byte("waiting MEDIA_PLAY")) && bytes.Contains(b, []byte("decisions here need an operator key"))
	})
	s.final()
	if n := tries.Load(); n < 2 {
		t.Fatalf("Reopen tried %d times", n)
	}
}
