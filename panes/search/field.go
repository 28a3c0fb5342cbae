package searchpane

import (
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
)

// field is a one-line text editor. Our own rather than bubbles' textinput so
// the view has no blinking cursor state: frames stay deterministic for
// goldens, and a keystroke costs only the edit.
type field struct {
	text []rune
	pos  int
}

func (f *field) Value() string { return string(f.text) }

func (f *field) SetValue(s string) {
	f.text = []rune(s)
	f.pos = len(f.text)
}

// handle applies an editing key and reports whether the text changed and
// whether the key was an editing key at all.
func (f *field) handle(msg tea.KeyPressMsg) (changed, used bool) {
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
		f.text = f.text[f.pos:]
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
	f.insert(msg.Text)
	return true, true
}

func (f *field) insert(s string) {
	// a field is one line: pasted newlines and tabs become spaces
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		if unicode.IsControl(r) {
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
