package safetext

import (
	"strings"
	"testing"
)

// hostile is one string of each family a terminal would act on or a person
// could not see; none of its raw characters may survive Line.
var hostile = []struct{ name, in, want string }{
	{"CSI clear screen", "a\x1b[2J\x1b[Hb", `a\x1b[2J\x1b[Hb`},
	{"OSC 0 title BEL", "\x1b]0;pwned\x07x", `\x1b]0;pwned\x07x`},
	{"OSC 2 title ST", "\x1b]2;pwned\x1b\\x", `\x1b]2;pwned\x1b\x`},
	{"OSC 8 hyperlink", "\x1b]8;;https://evil\x1b\\ok\x1b]8;;\x1b\\", `\x1b]8;;https://evil\x1b\ok\x1b]8;;\x1b\`},
	{"OSC 52 clipboard", "\x1b]52;c;cm0gLXJmIH4=\x07", `\x1b]52;c;cm0gLXJmIH4=\x07`},
	{"DCS", "\x1bP+q544e\x1b\\", `\x1bP+q544e\x1b\`},
	{"C1 CSI single byte", "a\u009b2Jb", `a\u009b2Jb`},
	{"C1 OSC single byte", "\u009d0;t\u009c", `\u009d0;t\u009c`},
	{"NEL", "a\u0085b", `a\u0085b`},
	{"carriage return", "agent:good\rEVIL", `agent:good\rEVIL`},
	{"backspace", "abc\b\b\bxyz", `abc\x08\x08\x08xyz`},
	{"newline", "line1\nline2", `line1\nline2`},
	{"DEL", "a\x7fb", `a\x7fb`},
	{"RLO", "invoice\u202egpj.exe", `invoice\u202egpj.exe`},
	{"bidi isolate", "a\u2066b\u2069", `a\u2066b\u2069`},
	{"zero-width space", "paypa\u200bl.com", `paypa\u200bl.com`},
	{"word joiner", "a\u2060b", `a\u2060b`},
	{"BOM", "\ufeffx", `\ufeffx`},
	{"soft hyphen", "pay\u00adpal", `pay\u00adpal`},
	{"no-break space", "a\u00a0b", `a\u00a0b`},
	{"line separator", "a\u2028b\u2029c", `a\u2028b\u2029c`},
	{"tag character", "a\U000e0041", `a\U000e0041`},
	{"hangul filler", "a\u3164b", `a\u3164b`},
	{"mongolian free variation selector", "pay\u180bpal\u180f", `pay\u180bpal\u180f`},
	{"invalid UTF-8", "a\xffb", `a\xffb`},
}

func TestLineEscapesEveryHostileFamily(t *testing.T) {
	for _, c := range hostile {
		got := Line(c.in)
		if got != c.want {
			t.Errorf("%s: Line(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
		for _, r := range got {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Errorf("%s: a raw control %U reached the output", c.name, r)
			}
		}
	}
}

func TestLineLeavesOrdinaryTextAlone(t *testing.T) {
	for _, s := range []string{"agent:claude", "café ☕ 日本語 ❤️", `C:\path\to`, "Ünïcödé — “quotes”", "a b"} {
		if got := Line(s); got != s {
			t.Errorf("Line(%q) = %q, want it unchanged", s, got)
		}
		if Hidden(s) != 0 {
			t.Errorf("Hidden(%q) = %d, want 0", s, Hidden(s))
		}
	}
}

func TestHiddenCountsEachEscapedCharacter(t *testing.T) {
	if n := Hidden("a\u200bb\u202ec\x1b"); n != 3 {
		t.Fatalf("Hidden = %d, want 3", n)
	}
	if HiddenNote(3) != `3 hidden characters shown as \uXXXX` || HiddenNote(0) != "" {
		t.Fatalf("HiddenNote: %q / %q", HiddenNote(3), HiddenNote(0))
	}
}

func TestRenderMarksOnlyEscapes(t *testing.T) {
	got := Inspect("ok\u202eno").Render(func(s string) string { return "[" + s + "]" })
	if got != `ok[\u202e]no` {
		t.Fatalf("Render = %q", got)
	}
}

func TestLinesLaysOutLineByLine(t *testing.T) {
	got := Lines("GET /\r\nHost: a\rb\n\x1b[2Jfake")
	want := []string{"GET /", `Host: a\rb`, `\x1b[2Jfake`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("Lines = %q, want %q", got, want)
	}
}

func TestTabsExpandInContentAndEscapeInFields(t *testing.T) {
	if got := InspectWith("\tx\ty", Options{TabWidth: 4}).String(); got != "    x   y" {
		t.Fatalf("content tabs = %q", got)
	}
	if got := Line("a\tb"); got != `a\tb` {
		t.Fatalf("field tab = %q", got)
	}
}

func TestInspectHostShowsPunycodeAndFlagsLookAlikes(t *testing.T) {
	h := InspectHost("pаypal.com") // Cyrillic а
	if h.ASCII != "xn--pypal-4ve.com" || !h.LookAlike {
		t.Fatalf("mixed host: %+v", h)
	}
	if h := InspectHost("paypa\ua4f2.com"); !h.LookAlike { // Lisu ꓲ for l
		t.Errorf("a Latin host with a Lisu letter is not a look-alike: %+v", h)
	}
	if h := InspectHost("bücher.de"); h.ASCII != "xn--bcher-kva.de" || h.LookAlike {
		t.Fatalf("German IDN: %+v", h)
	}
	if h := InspectHost("example.com"); h.ASCII != "" || h.LookAlike || h.Shown != "example.com" {
		t.Fatalf("ASCII host: %+v", h)
	}
}

func TestURLWarningsNameEachProblem(t *testing.T) {
	w := URLWarnings("https://paypa\u200bl.com/a")
	if len(w) < 2 || !strings.Contains(w[0], "1 hidden character") || !strings.Contains(strings.Join(w, "|"), "xn--") {
		t.Fatalf("zero-width host warnings = %q", w)
	}
	w = URLWarnings("https://аpple.com/x")
	if !strings.Contains(strings.Join(w, "|"), "look-alike host: it mixes Cyrillic and Latin") {
		t.Fatalf("look-alike warnings = %q", w)
	}
	if w := URLWarnings("https://example.com/song.mp3"); w != nil {
		t.Fatalf("plain URL warnings = %q", w)
	}
	for _, s := range w {
		if Line(s) != s {
			t.Fatalf("a warning is not itself safe: %q", s)
		}
	}
}

func TestPunycodeHostIsJudgedByWhatItDecodesTo(t *testing.T) {
	h := InspectHost("xn--pple-43d.com") // "аpple.com" with a Cyrillic а
	if h.Unicode != "аpple.com" || !h.LookAlike {
		t.Fatalf("punycode look-alike: %+v", h)
	}
	w := strings.Join(URLWarnings("https://xn--pple-43d.com/song.mp3"), "|")
	if !strings.Contains(w, "reads as аpple.com in Unicode") || !strings.Contains(w, "look-alike host: it mixes Cyrillic and Latin") {
		t.Fatalf("warnings = %q", w)
	}
	if h := InspectHost("xn--bcher-kva.de"); h.Unicode != "bücher.de" || h.LookAlike {
		t.Fatalf("honest IDN in punycode: %+v", h)
	}
	if h := InspectHost("xn--invalid-.com"); h.LookAlike {
		t.Fatalf("undecodable label: %+v", h)
	}
}
