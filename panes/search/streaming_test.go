package searchpane

import (
	"context"
	"testing"

	"github.com/vigil-dev/vigil/exec/search"
	"github.com/vigil-dev/vigil/panes/panetest"
)

// Results that stream in while the person moves through the first ones
// leave the cursor on the line it was on, and the screen on it; the first
// batch alone puts it on the first match.
func TestCursorStaysPutWhileResultsStreamIn(t *testing.T) {
	o := fakeOptions(t)
	o.Engine = func(ctx context.Context, _ search.Request, _ search.Options, _ func(search.Batch)) (search.Response, error) {
		<-ctx.Done() // the batches are delivered by the test
		return search.Response{}, ctx.Err()
	}
	p := New(o, styles())
	t.Cleanup(p.Close)
	p.Update(panetest.Key("/"))
	for _, k := range panetest.Typed("needle") {
		p.Update(k)
	}
	p.Update(panetest.Key("enter")) // starts the stream; its pump is not run
	p.Update(panetest.Key("esc"))
	if p.cur == nil {
		t.Fatal("no search running")
	}
	gen := p.cur.gen
	evs := func(path string, n int) []search.Event {
		var out []search.Event
		for i := range n {
			out = append(out, search.Event{Type: "match", Path: path, LineNumber: uint64(i + 1), Line: "needle"})
		}
		return out
	}
	p.Update(batchMsg{gen: gen, events: evs("a.go", 30)})
	if ev, ok := p.results.selected(); !ok || ev.Path != "a.go" || ev.LineNumber != 1 {
		t.Fatalf("first batch: selected %+v", ev)
	}
	p.View(80, 20)
	for range 25 {
		p.Update(panetest.Key("j"))
	}
	p.View(80, 20)
	top := p.results.list.Top()
	for _, b := range []batchMsg{
		{gen: gen, events: evs("a.go", 5)}, // more of the same file
		{gen: gen, events: evs("b.go", 40)},
		{gen: gen, finished: true},
	} {
		p.Update(b)
		p.View(80, 20)
		if ev, ok := p.results.selected(); !ok || ev.Path != "a.go" || ev.LineNumber != 26 {
			t.Fatalf("after a batch the cursor is on %+v, want a.go:26", ev)
		}
		if p.results.list.Top() != top {
			t.Fatalf("after a batch the screen scrolled from %d to %d", top, p.results.list.Top())
		}
	}
}
