package approvalspane

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
)

// summaryDialog is the marked tasks' summary: y approves the rows with no
// warning, each bound to the hash its row shows; any other key cancels.
type summaryDialog struct {
	rows []summaryRow
}

// openSummary opens the summary on rows; the grace restarts at now.
func (d *dialogs) openSummary(rows []summaryRow, now time.Time) {
	d.grace.arm(now)
	d.summary = &summaryDialog{rows: rows}
}

// approvable is how many rows y would approve.
func (d summaryDialog) approvable() int {
	n := 0
	for _, r := range d.rows {
		if r.excluded() == "" {
			n++
		}
	}
	return n
}

// Update returns the intent a key means.
func (d summaryDialog) Update(msg tea.KeyPressMsg) any {
	if msg.Text != "y" && msg.Text != "Y" {
		return Close{}
	}
	var in ApproveMarked
	for _, r := range d.rows {
		if why := r.excluded(); why != "" {
			in.Excluded = append(in.Excluded, safetext.Line(r.id)+" not approved: "+why)
			continue
		}
		in.Tasks = append(in.Tasks, Approve{TaskID: r.id, PreviewHash: r.hash})
	}
	return in
}

// summaryCols are the summary table's column widths.
type summaryCols struct{ id, agent, cap, device, host int }

// summaryHeads are the table's column titles, in order.
var summaryHeads = [...]string{"TASK", "AGENT", "CAPABILITY", "DEVICE", "MEDIA HOST", "PREVIEW", "WARNINGS"}

// hashW is the preview hash's width in the table (as the approve prompt
// shows it).
const hashW = 12

// fitSummary sizes the columns to their widest value (capped), then
// shrinks the free-text ones, agent first, until the row fits in w.
func fitSummary(rows []summaryRow, w int) summaryCols {
	c := summaryCols{id: len("TASK"), agent: len("AGENT"), cap: len("CAPABILITY"), device: len("DEVICE"), host: len("MEDIA HOST")}
	for _, r := range rows {
		c.id = max(c.id, lipgloss.Width(safetext.Line(r.id)))
		c.agent = max(c.agent, lipgloss.Width(safetext.Line(r.rec.Agent)))
		c.cap = max(c.cap, lipgloss.Width(safetext.Line(r.rec.CapabilityID)))
		c.device = max(c.device, lipgloss.Width(safetext.Line(r.rec.Device)))
		c.host = max(c.host, lipgloss.Width(r.host))
	}
	c.id, c.agent, c.cap, c.device, c.host = min(c.id, 32), min(c.agent, 20), min(c.cap, 14), min(c.device, 16), min(c.host, 28)
	// mark, 6 gaps, the hash and the warnings column ("⚠ 9" or "none")
	fixed := 2 + 6 + hashW + len("WARNINGS")
	for _, col := range []*int{&c.agent, &c.host, &c.device, &c.id, &c.cap} {
		for *col > 6 && fixed+c.id+c.agent+c.cap+c.device+c.host > w {
			*col--
		}
	}
	return c
}

// summaryLines are the summary, boxed to w cells: the table (one row a
// marked task: the task, its agent, capability, device, media host, the
// preview hash its approval binds to, and its warnings, listed under it
// with why it is excluded), then the keys.
func (p *Pane) summaryLines(w int) []string {
	s := p.styles
	d := p.dialogs.summary
	iw := max(max(w, 4)-s.Dialog.GetHorizontalFrameSize(), 1)
	c := fitSummary(d.rows, iw)
	n := d.approvable()
	body := []string{panes.Fit(s.Warning.Render(fmt.Sprintf("Approve %d of %d marked tasks?", n, len(d.rows)))+" "+
		s.Muted.Render("each is bound to the preview shown for it"), iw)}
	head := "  " + strings.Join([]string{pad(summaryHeads[0], c.id), pad(summaryHeads[1], c.agent), pad(summaryHeads[2], c.cap),
		pad(summaryHeads[3], c.device), pad(summaryHeads[4], c.host), pad(summaryHeads[5], hashW), summaryHeads[6]}, " ")
	body = append(body, panes.Fit(s.Muted.Render(head), iw))
	for _, r := range d.rows {
		body = append(body, p.summaryRowLines(r, c, iw)...)
	}
	keys := s.KeyName.Render("y") + fmt.Sprintf(" approve these %d · ", n) + s.KeyName.Render("any other key") + " cancel (default: No)"
	if n == 0 {
		keys = s.Err.Render("nothing to approve: every marked task is excluded") + " · " + s.KeyName.Render("any key") + " close"
	}
	body = append(body, panes.Fit(keys, iw))
	box := s.Dialog.Width(max(w, 4)).Render(strings.Join(body, "\n"))
	return strings.Split(box, "\n")
}

// summaryRowLines are one task's row and, for an excluded one, its
// warnings and why, wrapped under it.
func (p *Pane) summaryRowLines(r summaryRow, c summaryCols, iw int) []string {
	s := p.styles
	why := r.excluded()
	mark, warn := s.Success.Render("✓ "), s.Muted.Render("none")
	if why != "" {
		mark = s.Err.Render("✗ ")
	}
	if len(r.warnings) > 0 {
		warn = s.Warning.Render(fmt.Sprintf("⚠ %d", len(r.warnings)))
	}
	host := r.host
	if host == "" {
		host = "—"
	}
	hash := short(r.hash)
	if r.err != nil {
		hash = "—"
	}
	line := mark + strings.Join([]string{p.cell(r.id, c.id), p.cell(r.rec.Agent, c.agent), p.cell(r.rec.CapabilityID, c.cap),
		p.cell(r.rec.Device, c.device), pad(host, c.host), pad(hash, hashW), warn}, " ")
	out := []string{panes.Fit(line, iw)}
	if why == "" {
		return out
	}
	for _, wmsg := range r.warnings {
		out = append(out, panes.Wrap(s.Warning.Render("    ⚠ "+wmsg), iw)...)
	}
	return append(out, panes.Wrap(s.Err.Render("    excluded: "+why), iw)...)
}

// maxReport is how many of the last batch's lines the pane shows (the
// list and the preview keep their room); the rest are counted.
const maxReport = 8

// reportLines are the last batch's lines, one per task, those not approved
// first (they are what needs the person): approved ones in the success
// style, the others as warnings.
func (p *Pane) reportLines(w int) []string {
	s := p.styles
	lines := make([]batchLine, 0, len(p.batch.report))
	for _, ok := range []bool{false, true} {
		for _, l := range p.batch.report {
			if l.ok == ok {
				lines = append(lines, l)
			}
		}
	}
	var out []string
	for i, l := range lines {
		if i == maxReport {
			rest, ok := lines[i:], 0
			for _, r := range rest {
				if r.ok {
					ok++
				}
			}
			out = append(out, s.Muted.Render(fmt.Sprintf("  … and %d more (%d approved and executed: press v for the decided tasks)", len(rest), ok)))
			break
		}
		st := s.Warning
		if l.ok {
			st = s.Success
		}
		out = append(out, panes.Fit(st.Render("  "+l.text), w))
	}
	return out
}
