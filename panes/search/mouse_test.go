package searchpane

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/search"
	"github.com/vigil-dev/vigil/panes/panetest"
)

// fakeEngine stands in for ugrep in pane tests: it finds the pattern as a
// fixed string in an in-memory tree and streams the events search.Run would
// (paths sorted, one batch per file, 1-based byte columns, submatch spans).
func fakeEngine(files map[string]string) Engine {
	return func(ctx context.Context, req search.Request, _ search.Options, emit func(search.Batch)) (search.Response, error) {
		paths := make([]string, 0, len(files))
		for p := range files {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		resp := search.Response{Pattern: req.Pattern}
		for _, path := range paths {
			if ctx.Err() != nil {
				return resp, ctx.Err()
			}
			var evs []search.Event
			for i, line := range strings.Split(files[path], "\n") {
				at := strings.Index(line, req.Pattern)
				if at < 0 || req.Pattern == "" {
					continue
				}
				evs = append(evs, search.Event{Type: "match", Path: path, LineNumber: uint64(i + 1), Column: uint64(at + 1),
					Line: line, MatchText: req.Pattern, Submatches: []search.Span{{Start: at, End: at + len(req.Pattern)}}})
			}
			resp.FilesScanned++
			resp.Count += len(evs)
			emit(search.Batch{Offset: resp.Count - len(evs), Events: evs, FilesScanned: resp.FilesScanned})
		}
		return resp, nil
	}
}

// fakeOptions is the pane over fakeEngine; the same files are on disk
// under the sandbox root, for the preview and the editor.
func fakeOptions(t *testing.T) Options {
	files := map[string]string{
		"a.go": "needle one\nnothing\nneedle two\n",
		"b.go": "x\nneedle three\n",
		"c.go": strings.Repeat("needle\n", 20),
	}
	root := t.TempDir()
	for name, body := range files {
		write(t, root, name, body)
	}
	o := baseOptions(root, "")
	o.Engine = fakeEngine(files)
	o.Backends = func(search.Options) []search.BackendInfo {
		return []search.BackendInfo{{Name: "fake", Version: "1.2.3", OK: true}}
	}
	return o
}

// runTyped focuses the field, types pattern, runs it with enter and takes
// every batch onto the pane.
func runTyped(t *testing.T, p *Pane, pattern string) {
	t.Helper()
	p.Update(panetest.Key("/"))
	for _, k := range panetest.Typed(pattern) {
		p.Update(k)
	}
	drain(t, p, p.Update(panetest.Key("enter")))
	p.Update(panetest.Key("esc"))
}

// The pane runs on an injected engine: no ugrep, no rg.
func TestInjectedEngineRunsWithoutABackend(t *testing.T) {
	p := New(fakeOptions(t), styles())
	defer p.Close()
	drain(t, p, p.Init(context.Background()))
	runTyped(t, p, "needle")
	if p.results.res.matches != 23 || len(p.results.res.groups) != 3 || p.results.final == nil {
		t.Fatalf("results: %d matches in %d files, final %v", p.results.res.matches, len(p.results.res.groups), p.results.final != nil)
	}
	if st := ansi.Strip(p.statusLine(120)); !strings.Contains(st, "23 matches in 3 files") || !strings.Contains(st, "fake 1.2.3") {
		t.Fatalf("status %q", st)
	}
}

// A click on a result row selects it (a click on a file header selects the
// file's first line); the wheel moves three rows a notch.
func TestClickAndWheelOnResults(t *testing.T) {
	p := New(fakeOptions(t), styles())
	defer p.Close()
	runTyped(t, p, "needle")
	view := strings.Split(ansi.Strip(p.View(120, 36)), "\n")
	y := -1
	for i, l := range view {
		if strings.Contains(l, "needle three") {
			y = i
		}
	}
	if y < 0 {
		t.Fatalf("row not drawn:\n%s", strings.Join(view, "\n"))
	}
	p.Update(panetest.Click(10, y))
	if ev, ok := p.results.selected(); !ok || ev.Line != "needle three" {
		t.Fatalf("click on %q selected %+v", view[y], ev)
	}
	// the header of c.go, the line above its first match
	for i, l := range view {
		if strings.HasPrefix(strings.TrimSpace(l), "c.go") {
			y = i
		}
	}
	p.Update(panetest.Click(3, y))
	if ev, ok := p.results.selected(); !ok || ev.Path != "c.go" || ev.LineNumber != 1 {
		t.Fatalf("click on the c.go header selected %+v", ev)
	}
	before := p.results.list.Cursor()
	p.Update(panetest.WheelDown(10, y))
	if p.results.list.Cursor() != before+3 {
		t.Fatalf("wheel down moved %d rows, want 3", p.results.list.Cursor()-before)
	}
	p.Update(panetest.WheelUp(10, y))
	if p.results.list.Cursor() != before {
		t.Fatalf("wheel up did not come back: %d, want %d", p.results.list.Cursor(), before)
	}
	// a click outside the list (the composer line) selects nothing
	p.Update(panetest.Click(3, 0))
	if p.results.list.Cursor() != before {
		t.Fatal("a click on the composer moved the selection")
	}
	// the selected row is highlighted across the whole width: every reset
	// inside it turns the selection background back on
	on, _, _ := strings.Cut(p.styles.Selected.Render("\x00"), "\x00")
	for _, l := range strings.Split(p.View(120, 36), "\n") {
		if strings.Contains(l, "›") {
			if !strings.HasPrefix(l, on) || strings.Count(l, "\x1b[m"+on) != strings.Count(l, "\x1b[m")-1 {
				t.Fatalf("the selection background stops inside the row: %q", l)
			}
			return
		}
	}
	t.Fatal("no selected row drawn")
}

// An engine error is shown beside the field its typed Field names (here
// include_glob, whose words do not start with the field's name).
func TestEngineErrorLandsOnItsField(t *testing.T) {
	o := fakeOptions(t)
	o.Engine = func(context.Context, search.Request, search.Options, func(search.Batch)) (search.Response, error) {
		fe := &search.FieldError{Field: search.FieldIncludeGlob, Index: 1, Msg: "unclosed [ in \"*.[go\""}
		return search.Response{}, &search.ToolError{Kind: search.BadArgs, Message: "the second glob: " + fe.Msg, Err: fe}
	}
	p := New(o, styles())
	defer p.Close()
	runTyped(t, p, "needle")
	if p.composer.errField != fInclude || !strings.Contains(p.composer.errText, "unclosed [") {
		t.Fatalf("error on field %d: %q", p.composer.errField, p.composer.errText)
	}
}
