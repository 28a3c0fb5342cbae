package memorypane

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/memory"
	"github.com/vigil-dev/vigil/panes/panetest"
)

// smallStore is a real SQLite file holding three memories on known days;
// it returns the file's path for another connection or process.
func smallStore(t *testing.T) (*memory.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memory.db")
	st, err := memory.Open(path, memory.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, m := range []memory.NewMemory{
		{Text: "oldest garden note", Tags: []string{"garden"}, Source: "notes", CreatedAt: t0.AddDate(0, -3, 0)},
		{Text: "standup about the release", Tags: []string{"work"}, Source: "slack", CreatedAt: t0.AddDate(0, -2, 0)},
		{Text: "garden plan for spring", Tags: []string{"garden", "plan"}, Source: "notes", CreatedAt: t0.AddDate(0, -1, 0)},
	} {
		if _, err := st.Add(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	return st, path
}

func hitTexts(p *Pane) []string {
	var out []string
	for _, i := range p.shown {
		out = append(out, p.out.Hits[i].Text)
	}
	return out
}

// Tags, source and dates filter without a query: the memories passing them,
// newest first, with no score, instead of "query: … at least 1 character".
func TestFilterOnlyListsNewestFirstWithoutScore(t *testing.T) {
	cases := []struct {
		name                          string
		tags, source, from, to, limit string
		want                          []string
	}{
		{"tag", "garden", "", "", "", "", []string{"garden plan for spring", "oldest garden note"}},
		{"source", "", "slack", "", "", "", []string{"standup about the release"}},
		{"dates", "", "", "2025-04-01", "2025-05-01", "", []string{"garden plan for spring", "standup about the release"}},
		{"dates and tag", "garden", "", "", "2025-04-30", "", []string{"oldest garden note"}},
		{"limit", "garden", "", "", "", "1", []string{"garden plan for spring"}},
		{"none", "work", "notes", "", "", "", nil},
	}
	st, _ := smallStore(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPane(st)
			for f, v := range map[int]string{fTags: c.tags, fSource: c.source, fFrom: c.from, fTo: c.to, fLimit: c.limit} {
				p.inputs[f].SetValue(v)
			}
			drain(p, p.Update(tea.KeyPressMsg{Code: tea.KeyEnter}))
			if hasInvalid(p) || !p.browsing || !p.filtered || p.searched {
				t.Fatalf("not a listing: invalid %v, browsing %v filtered %v searched %v", p.invalid, p.browsing, p.filtered, p.searched)
			}
			if got := hitTexts(p); !slices.Equal(got, c.want) {
				t.Fatalf("listed %q, want %q", got, c.want)
			}
			view := ansi.Strip(p.View(120, 30))
			for _, bad := range []string{"at least 1 character", "0.00", "░", "Score"} {
				if strings.Contains(view, bad) {
					t.Fatalf("the listing shows %q:\n%s", bad, view)
				}
			}
			want := "memories match the filters, newest first"
			switch len(c.want) {
			case 0:
				want = "no memories match the filters"
			case 1:
				want = "1 memory matches the filters, newest first"
			}
			if !strings.Contains(view, want) {
				t.Fatalf("the status does not say %q:\n%s", want, view)
			}
			if c.limit == "1" && !strings.Contains(view, "older ones exist: raise limit (1)") {
				t.Fatalf("a cut listing does not say so:\n%s", view)
			}
		})
	}
}

// A memory opened from a listing shows no score either.
func TestFilterOnlyDetailHasNoScore(t *testing.T) {
	st, _ := smallStore(t)
	p := newPane(st)
	p.inputs[fSource].SetValue("slack")
	drain(p, p.Update(tea.KeyPressMsg{Code: tea.KeyEnter}))
	drain(p, p.Update(panetest.Key("enter")))
	view := ansi.Strip(p.View(120, 30))
	if !p.Snapshot().Detail || strings.Contains(view, "score") || !strings.Contains(view, "source slack") {
		t.Fatalf("detail:\n%s", view)
	}
}

// The helper process of TestShowsMemoriesAddedByAnotherProcess: a separate
// program adding a memory, as `vigil memory add` or an MCP add_memory does.
func TestHelperProcessAddMemory(t *testing.T) {
	path := os.Getenv("VIGIL_TEST_MEMORY_ADD")
	if path == "" {
		t.Skip("run by TestShowsMemoriesAddedByAnotherProcess")
	}
	st, err := memory.Open(path, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Add(context.Background(), memory.NewMemory{Text: os.Getenv("VIGIL_TEST_MEMORY_TEXT"),
		Tags: []string{"garden"}, Source: "mcp", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
}

// addFromAnotherProcess runs the test binary as a separate process that
// adds one memory tagged garden to the file at path.
func addFromAnotherProcess(t *testing.T, path, text string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcessAddMemory$", "-test.count=1")
	cmd.Env = append(os.Environ(), "VIGIL_TEST_MEMORY_ADD="+path, "VIGIL_TEST_MEMORY_TEXT="+text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the other process: %v\n%s", err, out)
	}
}

// The running pane shows a memory another process added, without a key:
// the newest list, and a listing by filters, follow the store's changes.
func TestShowsMemoriesAddedByAnotherProcess(t *testing.T) {
	st, path := smallStore(t)
	s := start(t, New(Options{Tool: memory.NewTool(st, nil), Store: st, Now: clock}, styles()), 100, 24)
	s.waitFor(func(sn Snapshot) bool { return browsing(sn) && sn.Hits == 3 })

	added := time.Now()
	addFromAnotherProcess(t, path, "added by another process")
	s.waitFor(func(sn Snapshot) bool { return browsing(sn) && sn.Hits == 4 })
	t.Logf("shown %v after the other process started", time.Since(added))

	// a listing by tag follows too, and keeps to its filter
	s.keys("e<tab>garden<enter>")
	s.waitFor(func(sn Snapshot) bool { return sn.Filtered && !sn.Busy && sn.Hits == 3 })
	addFromAnotherProcess(t, path, "second garden memory from elsewhere")
	other, err := memory.Open(path, memory.Options{}) // another connection: not garden
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Add(context.Background(), memory.NewMemory{Text: "not about plants", Tags: []string{"work"}, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	other.Close()
	s.waitFor(func(sn Snapshot) bool { return sn.Filtered && !sn.Busy && sn.Hits == 4 })
	out := s.final()
	mustContain(t, out, "4 memories match the filters, newest first", "second garden memory from elsewhere")
	if strings.Contains(out, "not about plants") {
		t.Fatalf("the listing lost its filter:\n%s", out)
	}
}

// A search on screen is asked again after a change, keeping the fuzzy
// filter typed and the selected memory; the person's own search in
// flight is never cancelled for it, the change waits until it lands.
func TestChangeRefreshesSearchKeepingSelection(t *testing.T) {
	st, path := smallStore(t)
	p := newPane(st)
	press(t, p, "garden<enter>")
	if len(p.shown) != 2 {
		t.Fatalf("hits %q", hitTexts(p))
	}
	press(t, p, "j")
	sel, _ := p.Selected()

	other, err := memory.Open(path, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Add(context.Background(), memory.NewMemory{Text: "garden garden compost", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	drain(p, p.Update(changedMsg{}))
	if len(p.out.Hits) != 3 || !p.searched {
		t.Fatalf("the search was not asked again: %q", hitTexts(p))
	}
	if now, _ := p.Selected(); now.ID != sel.ID {
		t.Fatalf("the selection moved from %d to %d", sel.ID, now.ID)
	}

	// a change while the person's search runs: noted, asked once it lands
	press(t, p, "e")
	search := p.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if search == nil || !p.running {
		t.Fatal("no search in flight")
	}
	if cmd := p.Update(changedMsg{}); cmd != nil {
		t.Fatal("a change started a read while the search ran")
	}
	after := p.Update(search())
	if after == nil {
		t.Fatal("the change that came meanwhile was dropped")
	}
	drain(p, after)
	if !p.searched || p.running || p.live.dirty {
		t.Fatalf("searched %v running %v dirty %v", p.searched, p.running, p.live.dirty)
	}
}

// Close ends the change feed and waits for it.
func TestCloseEndsTheFeed(t *testing.T) {
	st, _ := smallStore(t)
	p := New(Options{Tool: memory.NewTool(st, nil), Store: st, Now: clock}, styles())
	cmd := p.follow(context.Background())
	if cmd == nil || p.live.ch == nil {
		t.Fatal("the feed did not start")
	}
	done := make(chan tea.Msg)
	go func() { done <- cmd() }()
	p.Close()
	select {
	case msg := <-done:
		if m, ok := msg.(changedMsg); !ok || !m.closed {
			t.Fatalf("the waiter got %#v", msg)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the feed's waiter did not end with Close")
	}
}

// A limit alone lists the newest memories, that many.
func TestLimitAloneListsTheNewest(t *testing.T) {
	st, _ := smallStore(t)
	p := newPane(st)
	p.inputs[fLimit].SetValue("1")
	drain(p, p.Update(tea.KeyPressMsg{Code: tea.KeyEnter}))
	view := ansi.Strip(p.View(120, 30))
	if got := hitTexts(p); !p.browsing || p.filtered || !slices.Equal(got, []string{"garden plan for spring"}) ||
		!strings.Contains(view, "the newest memory · e to search") || !strings.Contains(view, "older ones exist") {
		t.Fatalf("listed %q:\n%s", got, view)
	}
}

// Without a store (it could not open) a listing by filters says why, as
// browsing does, instead of hanging on "searching…".
func TestFilterOnlyWithoutStoreSaysWhy(t *testing.T) {
	openErr := &memory.CoreError{Msg: "Memory database is damaged"}
	p := typing(New(Options{Tool: memory.NewTool(memory.Unavailable(openErr), nil), OpenErr: openErr, Now: clock}, styles()))
	p.inputs[fTags].SetValue("garden")
	drain(p, p.Update(tea.KeyPressMsg{Code: tea.KeyEnter}))
	view := ansi.Strip(p.View(120, 30))
	if p.running || !strings.Contains(view, "cannot list memories: Memory database is damaged") {
		t.Fatalf("running %v:\n%s", p.running, view)
	}
}
