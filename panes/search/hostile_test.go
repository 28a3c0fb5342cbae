package searchpane

import (
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/search"
)

// sgr is the styling the pane itself writes; anything else that could
// steer a terminal must not reach it from the data.
var sgr = regexp.MustCompile("\x1b\\[[0-9;:]*m")

// checkNoRawControls fails when out (a raw frame, styles included) holds a
// control, format or bidi character other than the pane's own SGR styling
// and its line ends.
func checkNoRawControls(t *testing.T, out string) {
	t.Helper()
	for _, r := range sgr.ReplaceAllString(out, "") {
		if r == '\n' {
			continue
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029 {
			t.Fatalf("raw %U reached the screen:\n%q", r, out)
		}
	}
}

// The hostile file: its name and a line hold a screen clear
// (ESC[2J), an OSC 52 clipboard write, a right-to-left override and a
// zero-width space. On screen they are escapes; nothing raw gets through,
// in the results, the preview and the file heading.
func TestHostileNameAndLineAreShownEscaped(t *testing.T) {
	needBackend(t, "ugrep")
	root := t.TempDir()
	name := "evil\x1b[2J\u202egnp.\u200bexe.txt"
	line := "x := 1 // needle \x1b[2J\x1b]52;c;aGFja2Vk\x07 \u202eRLO\u200bZWSP\ttab"
	write(t, root, name, "first\n"+line+"\nlast \x1b[31mred\n")
	for _, be := range []string{"ugrep", "rg"} {
		t.Run(be, func(t *testing.T) {
			needBackend(t, be)
			o := baseOptions(root, be)
			o.Search.Search.MaxLineBytes = 4096
			p := typing(New(o, styles()))
			defer p.Close()
			for _, r := range "needle" {
				press(p, string(r))
			}
			p.composer.inputs[fContext].SetValue("1")
			drain(t, p, press(p, "enter"))
			if p.results.final == nil || p.results.res.matches != 1 {
				t.Fatalf("search: final %v, matches %d, err %q %q", p.results.final != nil, p.results.res.matches, p.composer.errText, p.results.runErr)
			}
			drain(t, p, press(p, "esc"))
			p.results.move(1)
			drain(t, p, press(p, "p")) // the preview
			out := p.View(160, 20)
			checkNoRawControls(t, out)
			plain := ansi.Strip(out)
			for _, want := range []string{
				`evil\x1b[2J\u202egnp.\u200bexe.txt`,   // the heading and the preview's title
				`needle \x1b[2J\x1b]52;c;aGFja2Vk\x07`, // the match line
				`\u202eRLO\u200bZWSP`,
				`last \x1b[31mred`, // a context line
			} {
				if !strings.Contains(plain, want) {
					t.Errorf("screen lacks %q:\n%s", want, plain)
				}
			}
			// The preview shows the same line escaped, once more.
			if n := strings.Count(plain, `\u202eRLO`); n < 2 {
				t.Errorf("the line shows %d times, want the list and the preview:\n%s", n, plain)
			}
		})
	}
}

// A scoped hit's ID, field and snippet, and a document's fields and body,
// are untrusted too.
func TestHostileScopedTextIsShownEscaped(t *testing.T) {
	for _, w := range []int{1, 7, 40, 120} {
		got := renderLine("a\x1b]52;c;x\x07b\u202ec\u200bd\r\ne", nil, w, rowOpts{tabs: tabWidth, base: styles().Text, hl: styles().Match, warn: styles().Warning})
		checkNoRawControls(t, got)
		if ansi.StringWidth(got) > w {
			t.Errorf("width %d: %d cells", w, ansi.StringWidth(got))
		}
	}
	out := highlightAll(`x \x1b[2J needle \u202e`, "needle", styles().Text, styles().Match, styles().Warning)
	checkNoRawControls(t, out)
	if ansi.Strip(out) != `x \x1b[2J needle \u202e` {
		t.Errorf("highlightAll changed the text: %q", ansi.Strip(out))
	}
}

// hostileResults is the case as the pane receives it, and worse: a
// thousand matches on 2 MB lines (as an engine without the line cap would
// send them), one string shared so the test holds 2 MB.
func hostileResults() []search.Event {
	long := strings.Repeat("a", 2_000_000)
	evs := make([]search.Event, 0, 1000)
	for i := range 1000 {
		spans := make([]search.Span, 0, 1000)
		for k := range 1000 {
			spans = append(spans, search.Span{Start: 4 * k, End: 4*k + 4})
		}
		evs = append(evs, search.Event{Type: "match", Path: "f" + strings.Repeat("x", i%31) + ".txt", LineNumber: uint64(i + 1),
			Column: 1, Line: long, MatchText: "aaaa", Submatches: spans, SubmatchesTruncated: true})
	}
	return evs
}

func hostilePane(t testing.TB) *Pane {
	p := typing(New(baseOptions(t.TempDir(), "ugrep"), styles()))
	p.backendKnown = true
	p.composer.inputs[fPattern].SetValue("aaaa")
	p.gen, p.results.gen = 1, 1
	p.results.res.add(hostileResults())
	p.focus = focusResults
	p.preview.open = true
	p.preview.path = p.results.res.events[0].Path
	p.preview.lines = []string{p.results.res.events[0].Line, p.results.res.events[0].Line}
	p.View(200, 60)
	return p
}

// A key press on the hostile results set is handled, and the frame drawn,
// without touching whole lines: before the cut a press took 5.7 s here. The
// 100 ms target is measured by BenchmarkHostileKeyPress (about 11 ms). This
// test counts work, not time, so a loaded machine cannot fail it: the bytes
// a press and its frame allocate (about 4 MB now). Touching each of the 60
// visible 2 MB lines once would allocate 120 MB, so the bound, 32 MB, fails
// on the regression and never on noise.
func TestHostileResultsKeepKeysFast(t *testing.T) {
	p := hostilePane(t)
	defer p.Close()
	var took []uint64
	var before, after runtime.MemStats
	for i := range 21 {
		k := "j"
		if i%4 == 3 {
			k = "k"
		}
		runtime.ReadMemStats(&before)
		p.Update(kp(k))
		out := p.View(200, 60)
		runtime.ReadMemStats(&after)
		took = append(took, after.TotalAlloc-before.TotalAlloc)
		if len(out) > 200*60*40 {
			t.Fatalf("a frame of %d bytes", len(out))
		}
	}
	slices.Sort(took)
	if took[10] > 32<<20 {
		t.Errorf("the median key press and frame allocated %d bytes (all: %v)", took[10], took)
	}
	t.Logf("key press + frame on 1000 matches of 2 MB lines: median %d bytes allocated, max %d", took[10], took[20])
}

// BenchmarkHostileKeyPress is one key press and one 200×60 frame over the
// hostile results set, preview open.
func BenchmarkHostileKeyPress(b *testing.B) {
	p := hostilePane(b)
	defer p.Close()
	i := 0
	for b.Loop() {
		k := "j"
		if i%40 >= 20 {
			k = "k"
		}
		i++
		p.Update(kp(k))
		p.View(200, 60)
	}
}

// A row is measured grapheme by grapheme, as the terminal draws it: an emoji
// presentation sequence ("☺" + VS16) is two cells though its first rune alone
// is one, and a flag is two regional indicators in two cells. Measured rune by
// rune, a line of them overflowed its row by almost twice the width.
func TestRenderLineWidthCountsGraphemes(t *testing.T) {
	for _, s := range []string{
		strings.Repeat("☺\ufe0f", 30),
		"xxxxxxxxxx" + strings.Repeat("☺\ufe0f", 30),
		strings.Repeat("🇺🇸", 30),
		strings.Repeat("e\u0301", 30),
		"a" + strings.Repeat("\u0301", 500) + strings.Repeat("b", 40),
		strings.Repeat("日本", 30),
	} {
		for _, w := range []int{5, 10, 11, 20} {
			out := renderLine(s, nil, w, rowOpts{tabs: tabWidth})
			if got := ansi.StringWidth(out); got > w {
				t.Errorf("renderLine(%q, width %d) is %d cells wide: %q", s, w, got, out)
			}
		}
	}
}

// Invalid UTF-8 is shown byte by byte (\x80), so a run of continuation bytes
// is no reason to move a window edge or a span's end further than one
// character's length: walking to the next character start dropped the
// letter before such a run and the whole run from view ("xy…" for
// "xyz\x80\x80…"), and made a match followed by one highlight — and slide
// to — the rest of the line, so the match itself fell off the row.
func TestRenderLineInvalidUTF8RunsStayVisible(t *testing.T) {
	got := ansi.Strip(renderLine("xyz"+strings.Repeat("\x80", 500), nil, 40, rowOpts{tabs: tabWidth}))
	if !strings.HasPrefix(got, `xyz\x80\x80`) {
		t.Errorf("a line of invalid bytes after xyz shows as %q, want it to start xyz\\x80\\x80", got)
	}
	line := strings.Repeat("\x80", 2000) + "needle" + strings.Repeat("\x80", 500)
	got = ansi.Strip(renderLine(line, []search.Span{{Start: 2000, End: 2006}}, 40, rowOpts{tabs: tabWidth}))
	if !strings.Contains(got, `\x80needle\x80`) {
		t.Errorf("the match inside invalid bytes shows as %q, want needle with its neighbours", got)
	}
}

// A row slid to show its match never starts between the two backslashes of
// the data's doubled `\\u202e`: shown from the second one, the row read
// "…\u202e…", Vigil's own mark for a right-to-left override under NO_COLOR.
func TestRenderLineSlideKeepsBackslashRunsWhole(t *testing.T) {
	line := strings.Repeat("a", 40) + `\u202e` + "bbbb" + "needle" + strings.Repeat("c", 20)
	got := ansi.Strip(renderLine(line, []search.Span{{Start: 50, End: 56}}, 30, rowOpts{tabs: tabWidth}))
	if strings.HasPrefix(got, `…\u`) {
		t.Errorf("the slid row is %q: it starts with a forged mark", got)
	}
	if !strings.Contains(got, "needle") {
		t.Errorf("the slid row is %q: the match is not shown", got)
	}
}
