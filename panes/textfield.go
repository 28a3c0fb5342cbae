package panes

import (
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/safetext"
)

// TextField is a one-line text editor shared by the panes. It keeps no blink
// state (unlike bubbles' textinput), so every frame of the same input renders
// the same — goldens stay stable — and a keystroke costs only the edit.
type TextField struct {
	text []rune
	pos  int
}

func (f *TextField) Value() string { return string(f.text) }

// AtEnd reports whether the cursor is past the last character, where → has
// nothing left to move over (the Search pane's path field completes there).
func (f *TextField) AtEnd() bool { return f.pos >= len(f.text) }

func (f *TextField) SetValue(s string) {
	f.text = nil
	f.pos = 0
	f.Insert(s)
}

// Handle applies an editing key and reports whether the text changed and
// whether the key meant anything to the field.
func (f *TextField) Handle(msg tea.KeyPressMsg) (changed, used bool) {
	switch msg.String() {
	case "left", "ctrl+b":
		f.pos = max(f.pos-1, 0)
		return false, true
	case "right", "ctrl+f":
		f.pos = min(f.pos+1, len(f.text))
		return false, true
	case "home", "ctrl+a":
		f.pos = 0
		return false, true
	case "end", "ctrl+e":
		f.pos = len(f.text)
		return false, true
	case "backspace", "ctrl+h":
		if f.pos == 0 {
			return false, true
		}
		f.text = append(f.text[:f.pos-1], f.text[f.pos:]...)
		f.pos--
		return true, true
	case "delete", "ctrl+d":
		if f.pos >= len(f.text) {
			return false, true
		}
		f.text = append(f.text[:f.pos], f.text[f.pos+1:]...)
		return true, true
	case "ctrl+u":
		changed = f.pos > 0
		f.text = append([]rune(nil), f.text[f.pos:]...)
		f.pos = 0
		return changed, true
	case "ctrl+k":
		changed = f.pos < len(f.text)
		f.text = f.text[:f.pos]
		return changed, true
	case "ctrl+w", "alt+backspace":
		i := f.pos
		for i > 0 && unicode.IsSpace(f.text[i-1]) {
			i--
		}
		for i > 0 && !unicode.IsSpace(f.text[i-1]) {
			i--
		}
		changed = i < f.pos
		f.text = append(f.text[:i], f.text[f.pos:]...)
		f.pos = i
		return changed, true
	}
	if msg.Mod&(tea.ModCtrl|tea.ModAlt) != 0 || msg.Text == "" {
		return false, false
	}
	f.Insert(msg.Text)
	return true, true
}

func (f *TextField) Insert(s string) {
	// a field is one line: pasted newlines and tabs become spaces, other
	// control characters are dropped so they cannot reach the terminal
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, s)
	rs := []rune(s)
	if len(rs) == 0 {
		return
	}
	text := make([]rune, 0, len(f.text)+len(rs))
	text = append(text, f.text[:f.pos]...)
	text = append(text, rs...)
	text = append(text, f.text[f.pos:]...)
	f.text = text
	f.pos += len(rs)
}

// Window returns the part of the text shown in width cells, scrolled so the
// cursor stays visible, split at the cursor (at is " " past the end).
func (f *TextField) Window(width int) (before, at, after string) {
	if width <= 0 {
		return "", "", ""
	}
	// a character that draws nothing or reorders the line (a pasted
	// zero-width space, a bidi override) is shown as its escape, as every
	// other surface shows it
	shown := make([]string, len(f.text))
	w := make([]int, len(f.text)+1)
	for i, r := range f.text {
		shown[i] = safetext.Line(string(r))
		w[i] = max(ansi.StringWidth(shown[i]), 1)
	}
	w[len(f.text)] = 1 // the cursor cell past the end
	// start is the first visible rune: as far left as lets the cursor fit
	start, used := f.pos, w[f.pos]
	for start > 0 && used+w[start-1] <= width {
		start--
		used += w[start]
	}
	end := f.pos + 1
	for end < len(f.text) && used+w[end] <= width {
		used += w[end]
		end++
	}
	before = strings.Join(shown[start:f.pos], "")
	if f.pos < len(f.text) {
		at = shown[f.pos]
		after = strings.Join(shown[f.pos+1:min(end, len(f.text))], "")
	} else {
		at = " "
	}
	return before, at, after
}
