package searchpane

import (
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
	"github.com/vigil-dev/vigil/themes"
)

// composerLook is what the composer's drawing needs from the screen.
type composerLook struct {
	s       *themes.Styles
	focused bool // the composer has the keyboard
	rg      bool // the backend is ripgrep, which has no fuzzy matching
}

// lines draws the pattern, the option chips flowed to w (fewer rows at
// small h, keeping the focused one) and the errors beside their fields.
func (c *composer) lines(w, h int, lk composerLook) []string {
	s := lk.s
	focused := lk.focused
	prompt := s.Muted.Render("❯ ")
	if focused && c.field == fPattern {
		prompt = s.Title.Render("❯ ")
	}
	var pat string
	if c.pattern() == "" && !(focused && c.field == fPattern) {
		pat = s.Muted.Render("pattern — / to edit")
	} else if c.pattern() == "" {
		pat = c.renderField(fPattern, w-2, lk) + s.Muted.Render("type a pattern · tab options · esc results")
	} else {
		pat = c.renderField(fPattern, w-2, lk)
	}
	lines := []string{prompt + pat}
	if c.errField == fPattern {
		lines = append(lines, c.errLines(w, lk)...)
	}
	// option chips, flowed into lines; at small heights only the line with
	// the focused chip is shown so the results keep their room
	var rows []chipLine
	cur, curW := "", 0
	var curFields []int
	for f := fScope; f < nFields; f++ {
		if !c.applies(f) {
			continue
		}
		c := c.chip(f, w, lk)
		cw := lipgloss.Width(c)
		if curW > 0 && curW+cw > w {
			rows = append(rows, chipLine{cur, curFields})
			cur, curW, curFields = "", 0, nil
		}
		cur += c
		curW += cw
		curFields = append(curFields, f)
	}
	if curW > 0 {
		rows = append(rows, chipLine{cur, curFields})
	}
	limit := len(rows)
	if h < 16 {
		limit = 1
	} else if h < 24 {
		limit = 2
	}
	first := 0
	if focused {
		for i, r := range rows {
			for _, f := range r.fields {
				if f == c.field {
					first = max(0, i-limit+1)
				}
			}
		}
	}
	for i := first; i < len(rows) && i < first+limit; i++ {
		lines = append(lines, rows[i].text)
		for _, f := range rows[i].fields {
			if f == c.errField {
				lines = append(lines, c.errLines(w, lk)...)
			}
		}
	}
	if c.errField > fPattern && !containsChipRow(rows[first:min(first+limit, len(rows))], c.errField) {
		lines = append(lines, c.errLines(w, lk)...)
	}
	if focused {
		switch c.field {
		case fPath:
			dir, names := c.completions()
			if len(names) > 0 {
				for i := range names {
					names[i] = safetext.Line(dir + names[i] + "/")
				}
				lines = append(lines, s.Muted.Render(panes.Truncate("  dirs: "+strings.Join(names, "  "), w)))
			}
		case fFuzzy:
			if lk.rg {
				lines = append(lines, s.Muted.Render(panes.Truncate("  fuzzy needs ugrep: ripgrep has no approximate matching", w)))
			} else {
				lines = append(lines, s.Muted.Render(panes.Truncate("  fuzzy N allows N typos per match (ugrep -ZN)", w)))
			}
		case fInclude, fExclude:
			lines = append(lines, s.Muted.Render(panes.Truncate("  comma-separated globs, e.g. *.go,docs/**", w)))
		}
	}
	return lines
}

type chipLine struct {
	text   string
	fields []int
}

func containsChipRow(rows []chipLine, f int) bool {
	for _, r := range rows {
		for _, x := range r.fields {
			if x == f {
				return true
			}
		}
	}
	return false
}

func (c *composer) errLines(w int, lk composerLook) []string {
	var out []string
	for _, l := range panes.Wrap("✗ "+safetext.Line(c.errText), max(w-2, 1)) {
		out = append(out, "  "+lk.s.Err.Render(l))
	}
	return out
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// chip renders one option as name:value, marked when focused.
func (c *composer) chip(f, w int, lk composerLook) string {
	s := lk.s
	var name, val string
	switch f {
	case fScope:
		name, val = "scope", "content"
		if c.isScoped() {
			sc := c.scope()
			val = sc.Name + "(" + sc.Kind + ")"
		}
	case fCase:
		name, val = "case", caseModes[c.caseIdx]
	case fMode:
		name, val = "mode", "regex"
		if c.fixed {
			val = "fixed"
		}
	case fWord:
		name, val = "word", onOff(c.word)
	case fHidden:
		name, val = "hidden", onOff(c.hidden)
	case fFollow:
		name, val = "follow", onOff(c.follow)
	case fNoIgnore:
		name, val = "no-ignore", onOff(c.noIgnore)
	case fRecursive:
		name, val = "recursive", onOff(c.recurse)
	case fFuzzy:
		name, val = "fuzzy", "off"
		if c.fuzzy > 0 {
			val = strconv.Itoa(c.fuzzy)
		}
		if lk.rg && c.fuzzy == 0 {
			val = "off(rg)"
		}
	case fPath:
		name = "path"
	case fInclude:
		name = "include"
	case fExclude:
		name = "exclude"
	case fContext:
		name = "context"
	case fMax:
		name = "max"
	case fPerFile:
		name = "per-file"
	case fTimeout:
		name = "timeout-ms"
	}
	focused := lk.focused && c.field == f
	if isTextField(f) {
		if focused {
			val = c.renderField(f, max(w/2, 8), lk)
		} else {
			val = c.inputs[f].Value()
			if val == "" {
				switch f {
				case fPath:
					val = "."
				case fPerFile:
					val = "none"
				default:
					val = "-"
				}
			}
			val = panes.Truncate(safetext.Line(val), max(w/3, 6))
		}
	}
	label := s.Label.Render(name + ":")
	valStyle := s.Text
	if f == c.errField {
		valStyle = s.Err
	}
	if focused {
		return s.Cursor.Render("▸") + s.Selected.Render(label+valStyle.Render(val)) + " "
	}
	return " " + label + valStyle.Render(val) + " "
}

// renderField draws a text field with its cursor when focused, scrolled
// horizontally so the cursor stays in view.
func (c *composer) renderField(f, width int, lk composerLook) string {
	fd := &c.inputs[f]
	focused := lk.focused && c.field == f
	before, at, after := fd.Window(max(width, 1))
	if !focused {
		return lk.s.Input.Render(before + strings.TrimRight(at+after, " "))
	}
	return lk.s.InputFocused.Render(before) + lk.s.Cursor.Reverse(true).Render(at) + lk.s.InputFocused.Render(after)
}
