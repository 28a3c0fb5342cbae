package media

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/safetext"
)

// The media_uri text rules of issue 18, must-reject and must-accept: C0/C1
// controls and bidi controls are rejected outright, naming the field, the
// rule and the code point but never echoing the value; other format
// characters pass and are left to the screens to show escaped with warnings.
func TestInputMediaURITextRules(t *testing.T) {
	reject := []struct{ name, uri, rule, cp string }{
		{"ESC CSI", "https://a.example/\x1b[2Jx.mp3", "control characters", "U+001B"},
		{"OSC 52", "https://a.example/\x1b]52;c;eA==\x07", "control characters", "U+001B"},
		{"BEL", "https://a.example/a\x07", "control characters", "U+0007"},
		{"carriage return", "https://a.example/a\rb", "control characters", "U+000D"},
		{"backspace", "/music/a\bb.mp3", "control characters", "U+0008"},
		{"newline in path", "/music/a\nb.mp3", "control characters", "U+000A"},
		{"DEL", "/music/a\x7f.mp3", "control characters", "U+007F"},
		{"C1 CSI", "https://a.example/\u009b2J", "control characters", "U+009B"},
		{"NEL", "https://a.example/a\u0085b", "control characters", "U+0085"},
		{"RLO", "https://a.example/invoice\u202egpj.mp3", "right-to-left/left-to-right controls", "U+202E"},
		{"RLO in a path", "/music/\u202e3pm.exe", "right-to-left/left-to-right controls", "U+202E"},
		{"LRE", "https://a.example/\u202ax", "right-to-left/left-to-right controls", "U+202A"},
		{"PDF", "https://a.example/\u202cx", "right-to-left/left-to-right controls", "U+202C"},
		{"RLI", "https://a.example/\u2067x\u2069", "right-to-left/left-to-right controls", "U+2067"},
		{"LRM", "https://a.example/\u200ex", "right-to-left/left-to-right controls", "U+200E"},
		{"RLM in host", "https://pay\u200fpal.com/x", "right-to-left/left-to-right controls", "U+200F"},
		{"ALM", "https://a.example/\u061cx", "right-to-left/left-to-right controls", "U+061C"},
		{"invalid UTF-8", "https://a.example/\xffx", "valid UTF-8", "U+FFFD"},
		{"no-break space in a URI", "https://a.example/some\u00a0song", "no search phrases", ""},
		{"line separator in a URI", "https://a.example/a\u2028b", "no search phrases", ""},
	}
	for _, c := range reject {
		_, err := ParseInputs(CapPlay, playInputs(c.uri), []string{"tv"})
		var te *task.Error
		if !errors.As(err, &te) || te.Code != task.ExecutionFailed {
			t.Errorf("%s: %q accepted or wrong error: %v", c.name, c.uri, err)
			continue
		}
		if !strings.Contains(te.Message, "inputs.media_uri") || !strings.Contains(te.Message, c.rule) ||
			(c.cp != "" && !strings.Contains(te.Message, c.cp)) {
			t.Errorf("%s: message %q does not name the field, the rule %q and %s", c.name, te.Message, c.rule, c.cp)
		}
		for _, r := range te.Message {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || safetext.IsBidiControl(r) || r == 0xa0 || r == 0x2028 {
				t.Errorf("%s: the message carries the raw %U: %q", c.name, r, te.Message)
			}
		}
		if !utf8.ValidString(te.Message) {
			t.Errorf("%s: the message is not valid UTF-8: %q", c.name, te.Message)
		}
	}

	accept := []struct{ name, uri string }{
		{"zero-width space in host", "https://paypa\u200bl.com/song.mp3"},
		{"word joiner", "https://a.example/a\u2060b.mp3"},
		{"soft hyphen", "https://a.example/pay\u00adpal.mp3"},
		{"BOM", "https://a.example/\ufeffx.mp3"},
		{"Cyrillic look-alike host", "https://p\u0430ypal.com/song.mp3"},
		{"German IDN", "https://bücher.de/hörbuch.mp3"},
		{"no-break space in a file name", "/music/some\u00a0song.mp3"},
		{"plain", "https://example.com/song.mp3"},
	}
	for _, c := range accept {
		a, err := ParseInputs(CapPlay, playInputs(c.uri), []string{"tv"})
		if err != nil || a.MediaURI != c.uri {
			t.Errorf("%s: %q rejected: %v", c.name, c.uri, err)
		}
	}
	// what is accepted is never shown as plain text: the screens' warnings
	if w := safetext.URLWarnings("https://paypa\u200bl.com/song.mp3"); len(w) == 0 {
		t.Errorf("a zero-width host gets no warning")
	}
	if w := strings.Join(safetext.URLWarnings("https://p\u0430ypal.com/song.mp3"), "|"); !strings.Contains(w, "look-alike") || !strings.Contains(w, "xn--") {
		t.Errorf("look-alike host warnings = %q", w)
	}
}

func playInputs(uri string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"media_uri": uri, "target_device": "tv"})
	return b
}
