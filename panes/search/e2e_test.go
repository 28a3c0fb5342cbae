package searchpane

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/search"
)

// TestEndToEndBackends drives the pane's model with both real backends:
// type, run, walk the results, preview, and check both agree.
func TestEndToEndBackends(t *testing.T) {
	root := fixtureTree(t)
	var shots []string
	for _, be := range []string{"ugrep", "rg"} {
		t.Run(be, func(t *testing.T) {
			info := needBackend(t, be)
			p := typing(New(baseOptions(root, be), styles()))
			defer p.Close()
			drain(t, p, p.Init(context.Background()))
			if p.backend.Name != be || p.backend.Version != info.Version {
				t.Fatalf("backend %+v, want %s", p.backend, be)
			}
			for _, r := range "needle" {
				press(p, string(r))
			}
			press(p, "alt+c") // sensitive: Needle no longer matches
			drain(t, p, press(p, "enter"))
			if p.results.final == nil || p.results.res.matches != 5 || len(p.results.res.groups) != 4 {
				t.Fatalf("%s: %d matches in %d files", be, p.results.res.matches, len(p.results.res.groups))
			}
			ev, ok := p.results.selected()
			if !ok || ev.Path != "docs/guide.md" || ev.LineNumber != 3 || len(ev.Submatches) != 2 {
				t.Fatalf("first selection %+v", ev)
			}
			press(p, "esc")
			drain(t, p, press(p, "p"))
			view := ansi.Strip(p.View(120, 30))
			if !strings.Contains(view, "docs/guide.md:3") || !strings.Contains(view, "# Guide") {
				t.Fatalf("preview missing:\n%s", view)
			}
			shots = append(shots, view[strings.Index(view, "docs/guide.md (1)"):strings.LastIndex(view, "\n")])
		})
	}
	if len(shots) == 2 && shots[0] != shots[1] {
		t.Fatalf("backends disagree on screen:\n%s\n---\n%s", shots[0], shots[1])
	}
}

func TestRenderLineKeepsMatchVisible(t *testing.T) {
	s := styles()
	long := strings.Repeat("a", 200) + "NEEDLE" + strings.Repeat("b", 50)
	cases := []struct {
		name, line string
		spans      []search.Span
		width      int
		want       string
	}{
		{"fits", "abc needle", []search.Span{{Start: 4, End: 10}}, 20, "abc needle"},
		{"cut at end", "needle " + strings.Repeat("x", 30), []search.Span{{Start: 0, End: 6}}, 12, "needle xxxx…"},
		{"slides to the match", long, []search.Span{{Start: 200, End: 206}}, 30, "…aaaaaaaaaaNEEDLEbbbbbbbbbbbb…"},
		{"tab expands", "\tx", nil, 10, "    x"},
		{"control char", "a\x01b", nil, 10, `a\x01b`},
		{"escape not cut in two", "abcdefg\x1bxyz", nil, 10, "abcdefg…"},
		{"tab stop after a match", "ab\tc", []search.Span{{Start: 0, End: 1}}, 10, "ab  c"},
		{"adjacent matches do not slide", strings.Repeat("a", 40), []search.Span{{Start: 0, End: 4}, {Start: 4, End: 8}, {Start: 8, End: 12}}, 10, "aaaaaaaaa…"},
		{"hidden characters", "a\u202eb\u200bc", nil, 20, `a\u202eb\u200bc`},
		{"wide runes", "日本語needle", []search.Span{{Start: 9, End: 15}}, 8, "…needle"},
		{"width 1", "needle", []search.Span{{Start: 0, End: 6}}, 1, "…"},
	}
	for _, c := range cases {
		got := ansi.Strip(renderLine(c.line, c.spans, c.width, rowOpts{tabs: tabWidth, base: s.Text, hl: s.Match, warn: s.Warning}))
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
		if w := ansi.StringWidth(got); w > c.width {
			t.Errorf("%s: %d cells > %d", c.name, w, c.width)
		}
	}
}

// TestSizeSweep draws every size with results, preview and errors: no
// panic, exactly h lines, none wider than w.
func TestSizeSweep(t *testing.T) {
	p := typing(New(baseOptions(t.TempDir(), "ugrep"), styles()))
	p.backendKnown = true
	p.composer.inputs[fPattern].SetValue("needle")
	var evs []search.Event
	for i := range 50 {
		evs = append(evs, search.Event{Type: "match", Path: fmt.Sprintf("dir/file%02d.go", i/5), LineNumber: uint64(i + 1),
			Line: strings.Repeat("x", i*3) + "needle" + "\t日本", Column: uint64(i*3 + 1), MatchText: "needle"})
	}
	p.gen, p.results.gen = 1, 1
	p.results.res.add(evs)
	p.results.fileErrs = []search.FileError{{Path: "a", Error: "broken symbolic link"}}
	p.focus = focusResults
	for _, mode := range []string{"list", "preview", "errors", "composer"} {
		p.preview.open, p.results.showErrs, p.focus = mode == "preview", mode == "errors", focusResults
		if mode == "composer" {
			p.focus, p.composer.field = focusComposer, fPath
		}
		p.preview.path, p.preview.lines = "dir/file00.go", []string{"one", "needle two", "three"}
		p.results.list.Select(1)
		for w := 1; w <= 130; w += 1 + w/10 {
			for h := 1; h <= 32; h += 1 + h/12 {
				out := p.View(w, h)
				lines := strings.Split(out, "\n")
				if len(lines) != h {
					t.Fatalf("%s %d×%d: %d lines", mode, w, h, len(lines))
				}
				for i, l := range lines {
					if lw := ansi.StringWidth(l); lw > w {
						t.Fatalf("%s %d×%d: line %d is %d wide: %q", mode, w, h, i, lw, ansi.Strip(l))
					}
				}
			}
		}
	}
}

// benchPane is a pane holding n results, focused on the list.
func benchPane(b *testing.B, n int) *Pane {
	p := typing(New(baseOptions(b.TempDir(), "ugrep"), styles()))
	p.backendKnown = true
	p.composer.inputs[fPattern].SetValue("needle")
	evs := make([]search.Event, n)
	for i := range evs {
		evs[i] = search.Event{Type: "match", Path: fmt.Sprintf("src/pkg%04d/file%03d.go", i/10000, (i/20)%1000),
			LineNumber: uint64(i%20 + 1), Line: "\tif err := needle(ctx, value); err != nil { return err }",
			Column: 12, MatchText: "needle"}
	}
	p.gen, p.results.gen = 1, 1
	p.results.res.add(evs)
	p.results.final = &search.Response{Count: n}
	p.focus = focusResults
	p.results.list.Select(n / 2)
	p.View(120, 40)
	runtime.GC() // setup's garbage is not the keystroke's cost
	return p
}

func benchKeystroke(b *testing.B, n int) {
	p := benchPane(b, n)
	down, up := tea.KeyPressMsg{Code: tea.KeyDown}, tea.KeyPressMsg{Code: tea.KeyUp}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			p.Update(down)
		} else {
			p.Update(up)
		}
		_ = p.View(120, 40)
	}
}

// BenchmarkKeystroke1k and 1M: a list keystroke's Update+View must not
// grow with the number of buffered events (only visible rows are drawn).
func BenchmarkKeystroke1k(b *testing.B) { benchKeystroke(b, 1_000) }
func BenchmarkKeystroke1M(b *testing.B) { benchKeystroke(b, 1_000_000) }

func benchTyping(b *testing.B, n int) {
	p := benchPane(b, n)
	p.focus, p.composer.field = focusComposer, fPattern
	k, bs := tea.KeyPressMsg{Code: 'x', Text: "x"}, tea.KeyPressMsg{Code: tea.KeyBackspace}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			p.Update(k)
		} else {
			p.Update(bs)
		}
		_ = p.View(120, 40)
	}
}

// BenchmarkTyping1k and 1M: typing in the pattern field over a huge result
// set (the old results stay on screen until the new query answers).
func BenchmarkTyping1k(b *testing.B) { benchTyping(b, 1_000) }
func BenchmarkTyping1M(b *testing.B) { benchTyping(b, 1_000_000) }
