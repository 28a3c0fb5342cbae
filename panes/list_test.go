package panes

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/panes/panetest"
)

// grouped is a list of groups: a header row (not selectable) then its hits.
// "H3" is a header with three hits; heights are one line unless tall holds
// an item.
type grouped struct {
	rows []bool // true: a header
	tall map[int]int
}

func newGrouped(sizes ...int) *grouped {
	g := &grouped{tall: map[int]int{}}
	for _, s := range sizes {
		g.rows = append(g.rows, true)
		for range s {
			g.rows = append(g.rows, false)
		}
	}
	return g
}

func (g *grouped) list() *List {
	return &List{
		Len:        func() int { return len(g.rows) },
		Selectable: func(i int) bool { return !g.rows[i] },
		Height: func(i int) int {
			if h, ok := g.tall[i]; ok {
				return h
			}
			return 1
		},
	}
}

func counted(n *int) *List { return &List{Len: func() int { return *n }} }

func TestListMovesSkippingHeaders(t *testing.T) {
	// rows: 0 H, 1-3 hits, 4 H, 5-6 hits, 7 H, 8 hit
	for _, tc := range []struct {
		name  string
		start int
		do    func(l *List)
		want  int
	}{
		{"opens on the first hit, not its header", 0, func(*List) {}, 1},
		{"down within a group", 1, func(l *List) { l.Move(1) }, 2},
		{"down over a header", 3, func(l *List) { l.Move(1) }, 5},
		{"up over a header", 5, func(l *List) { l.Move(-1) }, 3},
		{"up from the first hit stays", 1, func(l *List) { l.Move(-1) }, 1},
		{"down past the end stays on the last", 8, func(l *List) { l.Move(5) }, 8},
		{"a jump landing on a header goes on in its direction", 1, func(l *List) { l.Move(3) }, 5},
		{"a jump up landing on a header goes on up", 8, func(l *List) { l.Move(-4) }, 3},
		{"g is the first hit", 6, (*List).First, 1},
		{"G is the last hit", 2, (*List).Last, 8},
		{"selecting a header selects its first hit", 1, func(l *List) { l.Select(4) }, 5},
		{"selecting past the end clamps", 1, func(l *List) { l.Select(100) }, 8},
		{"the wheel moves the cursor", 1, func(l *List) { l.Wheel(panetest.WheelDown(0, 0)) }, 5},
		{"the wheel up", 8, func(l *List) { l.Wheel(panetest.WheelUp(0, 0)) }, 5},
		{"a sideways notch does nothing", 2, func(l *List) { l.Wheel(tea.MouseWheelMsg{Button: tea.MouseWheelLeft}) }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newGrouped(3, 2, 1).list()
			l.Select(tc.start)
			tc.do(l)
			if got := l.Cursor(); got != tc.want {
				t.Fatalf("cursor %d, want %d", got, tc.want)
			}
		})
	}
}

func TestListPagesByTheWindow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tall   map[int]int
		window int
		start  int
		page   int // +1 down, -1 up
		want   int
	}{
		{"one-line items: a window less one", nil, 5, 0, 1, 4},
		{"page up", nil, 5, 10, -1, 6},
		{"page down stops at the last", nil, 5, 97, 1, 99},
		{"page up stops at the first", nil, 5, 2, -1, 0},
		{"three-line items: as many as fill the window", map[int]int{1: 3, 2: 3, 3: 3, 4: 3}, 9, 0, 1, 3},
		{"an item taller than the window still moves one", map[int]int{1: 20}, 9, 0, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 100
			l := counted(&n)
			l.Height = func(i int) int {
				if h, ok := tc.tall[i]; ok {
					return h
				}
				return 1
			}
			l.Select(tc.start)
			l.Scroll(tc.window)
			if tc.page > 0 {
				l.PageDown()
			} else {
				l.PageUp()
			}
			if got := l.Cursor(); got != tc.want {
				t.Fatalf("cursor %d, want %d", got, tc.want)
			}
		})
	}
}

func TestListScrollKeepsTheCursorAndItsHeaderInView(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sizes   []int
		tall    map[int]int
		h       int
		top     int // the top before
		sel     int
		wantTop int
	}{
		{"the top stays while the cursor is in view", []int{20}, nil, 5, 3, 5, 3},
		{"down past the bottom: the cursor is the last line", []int{20}, nil, 5, 0, 9, 5},
		{"up past the top: the cursor is the first line", []int{20}, nil, 5, 8, 4, 4},
		{"up to a group's first hit: its header shows too", []int{3, 5}, nil, 4, 7, 5, 4},
		{"no blank lines below the end", []int{10}, nil, 5, 9, 10, 6},
		{"the whole list fits: top 0", []int{2}, nil, 10, 2, 2, 0},
		{"tall items: as many above the cursor as fit", []int{6}, map[int]int{1: 3, 2: 3, 3: 3, 4: 3, 5: 3, 6: 3}, 7, 0, 5, 4},
		{"an item taller than the window shows from its top", []int{3}, map[int]int{2: 12}, 5, 0, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGrouped(tc.sizes...)
			for k, v := range tc.tall {
				g.tall[k] = v
			}
			l := g.list()
			l.top, l.sel = tc.top, tc.sel
			if got := l.Scroll(tc.h); got != tc.wantTop {
				t.Fatalf("top %d, want %d", got, tc.wantTop)
			}
			if l.Cursor() != tc.sel {
				t.Fatalf("scrolling moved the cursor to %d", l.Cursor())
			}
		})
	}
}

func TestListKeepsItsItemWhenTheCountChanges(t *testing.T) {
	n := 3
	l := counted(&n)
	l.Select(2)
	n = 1000 // results streamed in below the cursor
	if l.Cursor() != 2 {
		t.Fatalf("grown: cursor %d, want 2", l.Cursor())
	}
	l.Last()
	n = 10 // a narrower filter
	if l.Cursor() != 9 {
		t.Fatalf("shrunk: cursor %d, want 9", l.Cursor())
	}
	n = 0
	l.Move(1)
	l.PageDown()
	l.Last()
	if l.Cursor() != 0 || l.Scroll(10) != 0 {
		t.Fatalf("empty: cursor %d", l.Cursor())
	}
	if lines, _ := l.Draw(10, func(int, bool) []string { t.Fatal("drew an item of an empty list"); return nil }); len(lines) != 0 {
		t.Fatalf("empty list drew %v", lines)
	}
	// a list that starts with a header and grows from empty opens on a hit
	g := &grouped{}
	gl := g.list()
	g.rows = []bool{true, false, false}
	if gl.Cursor() != 1 {
		t.Fatalf("first batch: cursor %d, want the first hit", gl.Cursor())
	}
}

func TestListDrawsTheWindowAndMapsClicks(t *testing.T) {
	g := newGrouped(2, 2)
	g.tall[2] = 3 // the first group's second hit takes three lines
	l := g.list()
	l.Select(4) // the second header: its first hit (row 4)
	l.Map.Reset(2, 0, 20)
	l.Scroll(5)
	lines, whole := l.Draw(5, func(i int, sel bool) []string {
		out := make([]string, g.list().height(i))
		for j := range out {
			out[j] = fmt.Sprintf("%d.%d", i, j)
		}
		if sel {
			out[0] = "*" + out[0]
		}
		return out
	})
	want := "2.0 2.1 2.2 3.0 *4.0"
	if got := strings.Join(lines, " "); got != want {
		t.Fatalf("drew %q, want %q", got, want)
	}
	if whole != 3 {
		t.Fatalf("whole items %d, want 3", whole)
	}
	for _, tc := range []struct {
		x, y int
		hit  bool
		want int
	}{
		{0, 3, true, 2},  // the tall item's second line
		{5, 5, true, 4},  // the header selects its first hit
		{0, 1, false, 4}, // above the list
		{25, 6, false, 4},
		{0, 7, false, 4}, // below the last line drawn
	} {
		if hit := l.Click(panetest.Click(tc.x, tc.y)); hit != tc.hit || l.Cursor() != tc.want {
			t.Fatalf("click (%d,%d): hit %v cursor %d, want %v %d", tc.x, tc.y, hit, l.Cursor(), tc.hit, tc.want)
		}
	}
	if l.Click(tea.MouseClickMsg{X: 0, Y: 2, Button: tea.MouseRight}) {
		t.Fatal("a right click selected")
	}
}

// A list known only by its count (the Audit log): a frame and a jump cost
// the window, not the length.
func TestListOfAMillionRowsTouchesOnlyTheWindow(t *testing.T) {
	n := 1_000_000
	asked := 0
	l := &List{Len: func() int { return n }, Height: func(int) int { asked++; return 1 }}
	l.Last()
	if l.TopFor(40) != n-40 || l.Top() != 0 {
		t.Fatalf("TopFor %d moved the top to %d", l.TopFor(40), l.Top())
	}
	l.Scroll(40)
	l.First()
	l.Scroll(40)
	l.Select(n / 2)
	lines := l.Render(40, func(i int, _ bool) []string { return []string{strconv.Itoa(i)} })
	if len(lines) != 40 || l.Top() > n/2 || n/2 >= l.Top()+40 {
		t.Fatalf("window %d lines from %d, cursor %d", len(lines), l.Top(), l.Cursor())
	}
	if asked > 1000 {
		t.Fatalf("asked %d heights for three frames of 40 lines", asked)
	}
}

// BenchmarkListFrameOfAMillion is one frame of the Audit table: a jump,
// the scroll and the 40 rows drawn, over a million rows known by count.
func BenchmarkListFrameOfAMillion(b *testing.B) {
	n := 1_000_000
	l := &List{Len: func() int { return n }}
	row := []string{""}
	draw := func(int, bool) []string { return row }
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		l.Select(i * 7919 % n)
		l.Map.Reset(2, 0, 100)
		l.Render(40, draw)
	}
}

// BenchmarkListFrameWithHeaders is one frame of the Search results: file
// headers among a million lines, the cursor paging down.
func BenchmarkListFrameWithHeaders(b *testing.B) {
	n := 1_000_000
	l := &List{Len: func() int { return n }, Selectable: func(i int) bool { return i%11 != 0 }}
	row := []string{""}
	draw := func(int, bool) []string { return row }
	b.ReportAllocs()
	for b.Loop() {
		l.PageDown()
		if l.Cursor() >= n-1 {
			l.First()
		}
		l.Map.Reset(2, 0, 100)
		l.Render(40, draw)
	}
}
