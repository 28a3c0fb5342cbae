package searchpane

import (
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
)

func (p *Pane) composerLines(w, h int) []string {
	s := p.styles
	focused := p.focus == focusComposer
	prompt := s.Muted.Render("❯ ")
	if focused && p.composer.field == fPattern {
		prompt = s.Title.Render("❯ ")
	}
	var pat string
	if p.composer.pattern() == "" && !(focused && p.composer.field == fPattern) {
		pat = s.Muted.Render("pattern — / to edit")
	} else if p.composer.pattern() == "" {
		pat = p.renderField(fPattern, w-2) + s.Muted.Render("type a pattern · tab options · esc results")
	} else {
		pat = p.renderField(fPattern, w-2)
	}
	lines := []string{prompt + pat}
	if p.composer.errField == fPattern {
		lines = append(lines, p.errLines(w)...)
	}
	// option chips, flowed into lines; at small heights only the line with
	// the focused chip is shown so the results keep their room
	var rows []chipLine
	cur, curW := "", 0
	var curFields []int
	for f := fScope; f < nFields; f++ {
		if !p.composer.applies(f) {
			continue
		}
		c := p.chip(f, w)
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
				if f == p.composer.field {
					first = max(0, i-limit+1)
				}
			}
		}
	}
	for i := first; i < len(rows) && i < first+limit; i++ {
		lines = append(lines, rows[i].text)
		for _, f := range rows[i].fields {
			if f == p.composer.errField {
				lines = append(lines, p.errLines(w)...)
			}
		}
	}
	if p.composer.errField > fPattern && !containsChipRow(rows[first:min(first+limit, len(rows))], p.composer.errField) {
		lines = append(lines, p.errLines(w)...)
	}
	if focused {
		switch p.composer.field {
		case fPath:
			dir, names := p.composer.completions()
			if len(names) > 0 {
				for i := range names {
					names[i] = safetext.Line(dir + names[i] + "/")
				}
				lines = append(lines, s.Muted.Render(panes.Truncate("  dirs: "+strings.Join(names, "  "), w)))
			}
		case fFuzzy:
			if p.backendKnown && p.backend.Name == "rg" {
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

func (p *Pane) errLines(w int) []string {
	var out []string
	for _, l := range panes.Wrap("✗ "+safetext.Line(p.composer.errText), max(w-2, 1)) {
		out = append(out, "  "+p.styles.Err.Render(l))
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
func (p *Pane) chip(f, w int) string {
	s := p.styles
	var name, val string
	switch f {
	case fScope:
		name, val = "scope", "content"
		if p.composer.isScoped() {
			sc := p.composer.scope()
			val = sc.Name + "(" + sc.Kind + ")"
		}
	case fCase:
		name, val = "case", caseModes[p.composer.caseIdx]
	case fMode:
		name, val = "mode", "regex"
		if p.composer.fixed {
			val = "fixed"
		}
	case fWord:
		name, val = "word", onOff(p.composer.word)
	case fHidden:
		name, val = "hidden", onOff(p.composer.hidden)
	case fFollow:
		name, val = "follow", onOff(p.composer.follow)
	case fNoIgnore:
		name, val = "no-ignore", onOff(p.composer.noIgnore)
	case fRecursive:
		name, val = "recursive", onOff(p.composer.recurse)
	case fFuzzy:
		name, val = "fuzzy", "off"
		if p.composer.fuzzy > 0 {
			val = strconv.Itoa(p.composer.fuzzy)
		}
		if p.backendKnown && p.backend.Name == "rg" && p.composer.fuzzy == 0 {
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
	focused := p.focus == focusComposer && p.composer.field == f
	if isTextField(f) {
		if focused {
			val = p.renderField(f, max(w/2, 8))
		} else {
			val = p.composer.inputs[f].Value()
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
	if f == p.composer.errField {
		valStyle = s.Err
	}
	if focused {
		return s.Cursor.Render("▸") + s.Selected.Render(label+valStyle.Render(val)) + " "
	}
	return " " + label + valStyle.Render(val) + " "
}

// renderField draws a text field with its cursor when focused, scrolled
// horizontally so the cursor stays in view.
func (p *Pane) renderField(f, width int) string {
	fd := &p.composer.inputs[f]
	focused := p.focus == focusComposer && p.composer.field == f
	before, at, after := fd.Window(max(width, 1))
	if !focused {
		return p.styles.Input.Render(before + strings.TrimRight(at+after, " "))
	}
	return p.styles.InputFocused.Render(before) + p.styles.Cursor.Reverse(true).Render(at) + p.styles.InputFocused.Render(after)
}
