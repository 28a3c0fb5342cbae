package approvalspane

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/preview"
	"github.com/vigil-dev/vigil/safetext"
)

// deadline is the moment a task stops being approvable and what sets it: the
// earlier of the approval timeout and the lease's exp.
func deadline(r approval.Record, now time.Time) (left time.Duration, kind string) {
	at, kind := r.Deadline()
	return at.Sub(now), kind
}

// deadlineAt is the moment r stops being approvable.
func deadlineAt(r approval.Record) time.Time {
	at, _ := r.Deadline()
	return at
}

// deadlineText says which deadline comes first and how far it is:
// "lease expires in 0:32", or, short, "lease 0:32".
func deadlineText(r approval.Record, now time.Time, short bool) string {
	left, kind := deadline(r, now)
	if left <= 0 {
		return kind + " expired"
	}
	if short {
		return kind + " " + countdown(left)
	}
	return kind + " expires in " + countdown(left)
}

// countdown is a deadline's distance as the pane shows it: to the second in
// its last two minutes ("1:59"), when seconds can matter to a decision, and
// to the minute before ("9m", "5h07m"), truncated, so a deadline never
// looks further away than it is. Text that changes every second costs a
// whole repaint every second (about a quarter of an idle screen's CPU): a queue
// whose deadlines are minutes away changes once a minute.
func countdown(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < secondsShownUnder {
		d = d.Truncate(time.Second)
		return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
	}
	return minutes(d)
}

// minutes is d to the minute, truncated: "42m", "5h07m" (an elapsed time
// past a minute, a countdown before its last two minutes).
func minutes(d time.Duration) string {
	if d < time.Hour {
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// secondsShownUnder is the longest duration countdown shows to the second.
const secondsShownUnder = 2 * time.Minute

// elapsed is how long ago something happened, as coarse as a glance needs:
// "42s", "7m", "3h05m" (truncated).
func elapsed(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(max(d, 0).Seconds()))
	}
	return minutes(d)
}

// rowCells are a queue row's columns, already safe to show (escaped, so
// their widths are their cell counts).
type rowCells struct {
	// the values as stored, shown through safetext (escapes marked)
	raw                         approval.Record
	id, cap, device, agent, age string
	deadline, deadlineShort     string
	left                        time.Duration
}

func cellsOf(r approval.Record, now time.Time) rowCells {
	left, _ := deadline(r, now)
	c := rowCells{raw: r,
		id: safetext.Line(shownID(r.TaskID)), cap: safetext.Line(r.CapabilityID), device: safetext.Line(r.Device),
		agent: safetext.Line(shownID(r.Agent)), age: "age " + elapsed(now.Sub(r.SubmittedAt)),
		deadline: deadlineText(r, now, false), deadlineShort: deadlineText(r, now, true), left: left,
	}
	if r.State == approval.Damaged {
		// it has no deadline that matters: it can never be decided
		c.deadline, c.deadlineShort, c.left = "damaged: cannot be decided", "damaged", 0
	}
	if r.SubmittedAt.IsZero() {
		c.age = "age ?"
	}
	return c
}

// rowLayout is the column widths every visible row shares. Under pressure
// the agent name shrinks first, then the age goes, then the agent, then the
// deadline's wording shortens; id, capability, device and deadline stay.
type rowLayout struct {
	id, cap, device, agent int
	age, shortDeadline     bool
	shortCap               bool
	deadline, ageW         int
}

const minAgent = 6

func layoutRows(rows []rowCells, w int) rowLayout {
	var l rowLayout
	ageW := 0
	for _, c := range rows {
		l.id = max(l.id, lipgloss.Width(c.id))
		l.cap = max(l.cap, lipgloss.Width(c.cap))
		l.device = max(l.device, lipgloss.Width(c.device))
		l.agent = max(l.agent, lipgloss.Width(c.agent))
		l.deadline = max(l.deadline, lipgloss.Width(c.deadline))
		ageW = max(ageW, lipgloss.Width(c.age))
	}
	l.id, l.device = min(l.id, 40), min(l.device, 24)
	full := min(l.agent, 24)
	// the columns that always stay, and what is left for the others
	rest := func() int { return w - (2 + l.id + 1 + l.cap + 1 + l.device + 1 + l.deadline) }
	fitAgent := func(room int) int {
		if room-1 < minAgent {
			return 0
		}
		return min(full, room-1)
	}
	// the agent name shrinks first (to a useful 12 cells), then the age
	// goes and the agent takes its room, then the agent shrinks to 6 and
	// goes, then the deadline's wording shortens
	l.ageW = ageW
	l.age = rest()-(ageW+1) >= min(full, 12)+1
	room := rest()
	if l.age {
		room -= ageW + 1
	}
	l.agent = fitAgent(room)
	if rest() < 0 {
		l.shortDeadline = true
		l.deadline = 0
		for _, c := range rows {
			l.deadline = max(l.deadline, lipgloss.Width(c.deadlineShort))
		}
		l.age = false
		l.agent = fitAgent(rest())
	}
	if rest() < 0 {
		// every capability is MEDIA_*: the prefix is the first thing to go
		l.shortCap, l.cap = true, 0
		for _, c := range rows {
			l.cap = max(l.cap, lipgloss.Width(strings.TrimPrefix(c.cap, "MEDIA_")))
		}
		l.agent = fitAgent(rest())
	}
	if rest() < 0 {
		// a long id is cut last, so every row keeps its deadline (the
		// selected row still shows its id whole, wrapped)
		l.id = max(l.id+rest(), minID)
		l.agent = fitAgent(rest())
	}
	return l
}

// minID is the least of an id a cut row keeps.
const minID = 12

// pad cuts (with an ellipsis) or pads s to n cells; s is ours.
func pad(s string, n int) string { return panes.Fit(s, n) }

// queueRow lays one row out; the deadline is styled by how close it is. A
// row wider than w is wrapped when selected (the person sees all of what
// they would decide on) and cut otherwise.
func (p *Pane) queueRow(c rowCells, l rowLayout, selected bool, w int) []string {
	s := p.styles
	cp := c.raw.CapabilityID
	if l.shortCap {
		cp = strings.TrimPrefix(cp, "MEDIA_")
	}
	parts := []string{p.cell(shownID(c.raw.TaskID), l.id), p.cell(cp, l.cap), p.cell(c.raw.Device, l.device)}
	if l.agent > 0 {
		parts = append(parts, p.cell(shownID(c.raw.Agent), l.agent))
	}
	if l.age {
		parts = append(parts, pad(c.age, l.ageW))
	}
	dl := c.deadline
	if l.shortDeadline {
		dl = c.deadlineShort
	}
	switch {
	case c.left <= time.Minute:
		dl = s.Err.Render(dl)
	case c.left <= 3*time.Minute:
		dl = s.Warning.Render(dl)
	default:
		dl = s.Success.Render(dl)
	}
	cursor := "  "
	if selected {
		cursor = s.Cursor.Render("▸ ")
	}
	if p.batch.isMarked(c.raw.TaskID) {
		// the cursor's second cell: the mark costs no column
		cursor = s.Success.Render("✓ ")
		if selected {
			cursor = s.Cursor.Render("▸") + s.Success.Render("✓")
		}
	}
	line := cursor + strings.Join(parts, " ") + " " + dl
	if !selected {
		return []string{panes.Fit(line, w)}
	}
	cut := lipgloss.Width(c.id) > l.id || lipgloss.Width(safetext.Line(cp)) > l.cap || lipgloss.Width(c.device) > l.device
	if lipgloss.Width(line) <= w && !cut {
		return []string{panes.SelectRow(line, w, s.Selected)}
	}
	// never cut the row being decided on: its whole text, wrapped (escapes
	// kept whole)
	dlText := c.deadline
	lead := "▸ "
	if p.batch.isMarked(c.raw.TaskID) {
		lead = "▸✓"
	}
	lines, _ := p.field(w, "", s.Text, ours(lead), theirs(shownID(c.raw.TaskID)), ours(" "), theirs(c.raw.CapabilityID), ours(" "),
		theirs(c.raw.Device), ours(" "), theirs(shownID(c.raw.Agent)), ours(" "), ours(dlText))
	var out []string
	for _, l := range lines {
		out = append(out, panes.SelectRow(l, w, s.Selected))
	}
	return out
}

// shownID is an id an agent chose (task id, lease sub or jti) as the pane
// shows it: a secret-shaped one (a pasted token) masked, an ordinary one
// unchanged. The pane keeps the stored id for everything it does.
func shownID(id string) string { return preview.MaskIdentifier(id) }

// cell shows an untrusted value in exactly n cells: escaped and marked,
// cut (never inside an escape) or padded after escaping.
func (p *Pane) cell(raw string, n int) string {
	t := safetext.Inspect(raw).Truncate(n)
	return p.renderText(t) + strings.Repeat(" ", max(n-t.Width(), 0))
}
