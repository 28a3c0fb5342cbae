package panes

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

type namesMsg struct {
	names []string
	all   bool
}

// next runs a Wait command with a deadline (a missed event fails the test
// instead of hanging it).
func next(t *testing.T, cmd tea.Cmd) tea.Msg {
	t.Helper()
	got := make(chan tea.Msg, 1)
	go func() { got <- cmd() }()
	select {
	case m := <-got:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no change signalled within 10 s")
	}
	return nil
}

// A burst of changes comes as signals carrying the names of the files that
// changed, each once; names kept for a later signal are not lost, and a
// watch limited to some names reports only those.
func TestWatcherNamesTheFilesThatChanged(t *testing.T) {
	dir := t.TempDir()
	w, err := Watch(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, n := range []string{"task-a", "task-b", "task-a"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for len(seen) < 2 {
		m := next(t, w.WaitNames(func(names []string, all bool) tea.Msg { return namesMsg{names, all} })).(namesMsg)
		if m.all {
			t.Fatal("events reported lost in a burst of three")
		}
		for _, n := range m.names {
			seen[n] = true
		}
	}
	if !seen["task-a"] || !seen["task-b"] || len(seen) != 2 {
		t.Fatalf("names %v", seen)
	}

	only, err := Watch(dir, "wanted")
	if err != nil {
		t.Fatal(err)
	}
	defer only.Close()
	os.WriteFile(filepath.Join(dir, "other"), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(dir, "wanted"), []byte("x"), 0o600)
	m := next(t, only.WaitNames(func(names []string, all bool) tea.Msg { return namesMsg{names, all} })).(namesMsg)
	if !slices.Equal(m.names, []string{"wanted"}) {
		t.Fatalf("a watch limited to one name reported %v", m.names)
	}
}

// Past maxNames between deliveries the watcher stops naming and says so:
// the pane then reloads everything rather than a partial list.
func TestWatcherLosesCountLoudly(t *testing.T) {
	w := &Watcher{changed: make(chan struct{}, 1)}
	for i := range maxNames + 1 {
		w.note(strconv.Itoa(i), false)
	}
	if _, all := w.take(); !all {
		t.Fatal("more names than kept, and not reported")
	}
	w.note("one", false)
	if names, all := w.take(); all || !slices.Equal(names, []string{"one"}) {
		t.Fatalf("after a reset: %v %v", names, all)
	}
}
