package auditpane

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/sahilm/fuzzy"

	"github.com/vigil-dev/vigil/audit/index"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
	"github.com/vigil-dev/vigil/themes"
)

// handleKey runs the mode's row for msg; other keys in the filter are typing.
func (p *Pane) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	if cmd, ok := p.keymap().Dispatch(msg); ok {
		return cmd
	}
	if p.filter.typing {
		if changed, _ := p.filter.field.Handle(msg); changed {
			return p.refilter()
		}
	}
	return nil
}

// Report is the chain's state for the badge.
func (p *Pane) Report() string {
	switch {
	case p.ver.loadErr != nil:
		return "cannot read log: " + p.ver.loadErr.Error()
	case p.ver.chain == nil:
		if p.ver.total > 0 {
			return fmt.Sprintf("verifying… %d%%", percent(p.ver.done, p.ver.total))
		}
		return "verifying…"
	case p.ver.broken() != nil:
		b := p.ver.broken()
		return fmt.Sprintf("BROKEN at #%d: %s", b.Index, b.Detail)
	default:
		s := fmt.Sprintf("chain verified · %s", count(p.ver.chain.Len(), "entry", "entries"))
		if n := len(p.ver.chain.Sealed()); n > 0 {
			s += " · " + count(n, "sealed gap", "sealed gaps")
		}
		return s
	}
}

// count is "1 entry", "2 entries".
func count[N int | int64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// brokenHint is the line under a broken chain's badge: what to run, since
// the badge alone leaves a first-day reader with no way on.
const brokenHint = "`vigil audit verify` says what broke; `vigil audit seal --reason R` records the break so the chain goes on"

func percent(done, total int64) int64 {
	if total <= 0 {
		return 0
	}
	return min(done*100/total, 100)
}

// View renders the table or the detail view.
func (p *Pane) View(w, h int) string {
	s := p.styles
	p.table.list.Map.Reset(0, 0, 0) // a frame without the table (the detail) maps no rows for clicks
	if w <= 0 || h <= 0 {
		return panes.Block(nil, w, h)
	}
	badge := p.Report()
	var badgeStyled string
	switch {
	case p.ver.broken() != nil, p.ver.loadErr != nil:
		badgeStyled = s.Err.Render("✗ " + badge)
	case p.ver.chain == nil:
		badgeStyled = s.Muted.Render(badge)
	default:
		badgeStyled = s.Success.Render("✓ " + badge)
	}
	filters := []string{}
	if p.filter.event != "" {
		filters = append(filters, "event="+p.filter.event)
	}
	if o := outcomes[p.filter.outcome]; o != "" {
		filters = append(filters, "outcome="+o)
	}
	head := s.Heading.Render("Audit log") + "  " + badgeStyled
	if len(filters) > 0 {
		head += "  " + s.Warning.Render("["+strings.Join(filters, " ")+"]")
	}
	switch {
	case p.table.indexing && p.table.total > 0:
		head += "  " + s.Muted.Render(fmt.Sprintf("indexing… %d%%", percent(p.table.done, p.table.total)))
	case p.filter.passing:
		head += "  " + s.Muted.Render(fmt.Sprintf("filtering… %d%%", percent(int64(p.filter.next), int64(len(p.table.offs)))))
	case p.filter.err != nil:
		head += "  " + s.Err.Render("filter: "+safetext.Line(p.filter.err.Error()))
	}
	lines := []string{head}
	if p.ver.broken() != nil && p.detail.entry == nil && p.detail.err == nil {
		lines = append(lines, s.Muted.Render(panes.Fit(brokenHint, w)))
	}
	if p.filter.typing || p.filter.field.Value() != "" {
		lines = append(lines, p.filterLine(w))
	}
	if p.detail.entry != nil || p.detail.err != nil {
		body := append(lines[1:], p.detailLines(w)...)
		return panes.Block(append([]string{lines[0]}, p.detail.view.Window(body, h-1)...), w, h)
	}
	cols := columns(w)
	lines = append(lines, s.Label.Render(cols.format("TIME", "ACTOR", "EVENT", "TASK", "TARGET", "OUTCOME")))
	p.table.list.Map.Reset(len(lines), 0, w)
	tableH := h - len(lines)
	p.table.height = tableH
	n := p.viewLen()
	if n == 0 {
		msg := "no entries yet"
		switch {
		case p.filter.passing:
			msg = "filtering…"
		case len(p.table.offs) > 0:
			msg = "no entries match the filters (x clears them)"
		}
		lines = append(lines, s.Muted.Render(msg))
		return panes.Block(lines, w, h)
	}
	badLine := int64(-1)
	if b := p.ver.broken(); b != nil && p.table.indexed {
		badLine = b.Index
	}
	query := p.filter.field.Value()
	now := p.now()
	rows := p.table.list.Render(tableH, func(i int, selected bool) []string {
		line := p.tableRow(p.lineAt(i), badLine, query, cols, now)
		if selected {
			line = panes.SelectRow(line, w, s.Selected)
		}
		return []string{line}
	})
	return panes.Block(append(lines, rows...), w, h)
}

// tableRow is line li of the log as a table row: read (or being read),
// marked where the chain breaks, the filter's matches highlighted.
func (p *Pane) tableRow(li int, badLine int64, query string, cols cols, now time.Time) string {
	s := p.styles
	r, ok := p.table.rows.get(p.table.offs[li])
	if !ok {
		r = index.Row{Time: "…"} // being read
	}
	hay := r.Time // the filter matched the time as logged
	r.Time = shortTime(r.Time, now)
	switch {
	case int64(li) == badLine:
		// the entry where the chain breaks: marked, whatever the filter
		return s.Err.Render(cols.format(r.Time, r.Actor, r.Event, r.Task, r.Target, "✗ "+p.ver.broken().Reason))
	case !ok:
		return s.Muted.Render(cols.format(r.Time, "", "", "", "", ""))
	case query != "":
		line := cols.format(r.Time, r.Actor, r.Event, r.Task, r.Target, r.Outcome)
		logged := r
		logged.Time = hay
		if m := fuzzy.Find(query, []string{logged.Hay()}); len(m) == 1 {
			line = highlight(r, len(hay), cols, m[0].MatchedIndexes, s)
		}
		return line
	}
	line := cols.format(r.Time, r.Actor, r.Event, r.Task, r.Target, r.Outcome)
	if r.Outcome != "ok" {
		line = s.Warning.Render(line)
	}
	return line
}

// filterLine is the / filter: the field with its cursor while typing, its
// value (made safe) otherwise.
func (p *Pane) filterLine(w int) string {
	s := p.styles
	if !p.filter.typing {
		return s.Cursor.Render("/") + s.Input.Render(safetext.Line(p.filter.field.Value()))
	}
	if p.filter.field.Value() == "" {
		return s.Cursor.Render("/") + s.Cursor.Reverse(true).Render(" ") + s.Muted.Render("fuzzy filter")
	}
	before, at, after := p.filter.field.Window(max(w-1, 1))
	return s.Cursor.Render("/") + s.InputFocused.Render(before) + s.Cursor.Reverse(true).Render(at) + s.InputFocused.Render(after)
}

type cols struct{ widths [6]int }

// timeWidth is the TIME column: "11-28 14:03:22" (shortTime).
const timeWidth = 14

func columns(w int) cols {
	// time 14, event 10, outcome 16 (approval_timeout); the rest shares
	// what is left, the actor first: at 80 columns "operator:ada" and
	// "agent:planner" stay whole
	c := cols{widths: [6]int{timeWidth, 0, 10, 0, 0, 16}}
	rest := w - timeWidth - 10 - 16 - 5
	if rest < 12 {
		rest = 12
	}
	c.widths[1] = rest * 40 / 100
	c.widths[3] = rest * 30 / 100
	c.widths[4] = rest - c.widths[1] - c.widths[3]
	return c
}

// shortTime is a logged time as the TIME column shows it, in now's zone:
// the time alone for today, "01-02 15:04:05" this year, the date alone
// before. The detail view (enter) shows the time as logged. A time that
// does not parse is shown as it is.
func shortTime(logged string, now time.Time) string {
	t, err := time.Parse(time.RFC3339Nano, logged)
	if err != nil {
		return logged
	}
	t = t.In(now.Location())
	ty, tm, td := t.Date()
	ny, nm, nd := now.Date()
	switch {
	case ty == ny && tm == nm && td == nd:
		return t.Format("15:04:05")
	case ty == ny:
		return t.Format("01-02 15:04:05")
	}
	return t.Format("2006-01-02")
}

func (c cols) format(v ...string) string {
	parts := make([]string, len(v))
	for i, s := range v {
		parts[i] = panes.Fit(s, c.widths[i])
	}
	return strings.Join(parts, " ")
}

// highlight renders a row with the fuzzy filter's matched characters
// styled. The haystack held the time as logged (loggedLen bytes), the row
// shows it shortened: the time column is drawn unmarked.
func highlight(r index.Row, loggedLen int, c cols, hits []int, s *themes.Styles) string {
	set := map[int]bool{}
	for _, h := range hits {
		set[h] = true
	}
	fields := []string{r.Time, r.Actor, r.Event, r.Task, r.Target, r.Outcome}
	parts := []string{panes.Fit(r.Time, c.widths[0])}
	base := loggedLen + 1 // byte offset of the field in the haystack (fuzzy reports byte offsets)
	for i, f := range fields {
		if i == 0 {
			continue
		}
		var b strings.Builder
		for j, ch := range panes.Fit(f, c.widths[i]) {
			// the haystack joins fields with single spaces; the fitted text
			// matches the field byte for byte until a cut's ellipsis
			if j < len(f) && set[base+j] && strings.HasPrefix(f[j:], string(ch)) {
				b.WriteString(s.MatchChar.Render(string(ch)))
			} else {
				b.WriteRune(ch)
			}
		}
		parts = append(parts, b.String())
		base += len(f) + 1
	}
	return strings.Join(parts, " ")
}

// ShortHelp is the status bar's keys for the current mode, from its rows.
func (p *Pane) ShortHelp() []key.Binding { return p.keymap().Footer() }

// FullHelp is the ? overlay's keys for the current mode, from its rows (the
// table's after another mode's, for what esc returns to).
func (p *Pane) FullHelp() [][]key.Binding {
	list := p.km.list.HelpGroups()
	if p.filter.typing || p.detail.open() {
		return append([][]key.Binding{p.keymap().Help()}, list...)
	}
	return list
}
