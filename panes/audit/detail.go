package auditpane

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/preview"
	"github.com/vigil-dev/vigil/safetext"
)

// detailState is the child that shows every field of one entry.
type detailState struct {
	entry *audit.Entry
	line  int // line number of the entry shown
	err   error
	view  panes.Viewport
	want  int64 // offset of the entry the detail view waits for; -1 for none
}

type detailMsg struct {
	off   int64
	entry audit.Entry
	err   error
}

// open is whether the detail view shows (its entry loaded, or failed to).
func (d *detailState) open() bool { return d.entry != nil || d.err != nil }

func (d *detailState) close() { d.entry, d.err, d.want = nil, nil, -1 }

func (d *detailState) apply(msg detailMsg) {
	if msg.off != d.want {
		return // closed, or another entry was asked for since
	}
	d.entry, d.err = &msg.entry, msg.err
	d.view.Top()
}

// openSelected opens the detail view of the selected entry.
func (p *Pane) openSelected() tea.Cmd {
	if p.viewLen() == 0 {
		return nil
	}
	p.detail.line = p.lineAt(p.table.list.Cursor())
	return p.openDetail(p.table.offs[p.detail.line])
}

func (p *Pane) openDetail(off int64) tea.Cmd {
	path := p.path
	p.detail.want = off
	return p.life.cmd(func() tea.Msg {
		out := detailMsg{off: off}
		_, err := audit.Scan(path, off, func(l audit.Line) bool {
			out.entry, out.err = l.Entry, l.Err
			return false
		})
		if err != nil {
			out.err = err
		}
		return out
	})
}

// detailLines is the detail view: every field, wrapped, and why the chain
// breaks here when it does.
func (p *Pane) detailLines(w int) []string {
	s := p.styles
	var why []string
	if b := p.ver.broken(); b != nil && p.table.indexed && int64(p.detail.line) == b.Index {
		for _, l := range panes.Wrap(fmt.Sprintf("✗ the chain breaks here: %s — %s", b.Reason, b.Detail), max(w, 1)) {
			why = append(why, s.Err.Render(l))
		}
	}
	if p.detail.err != nil {
		return append(why, s.Err.Render("this line is damaged: "+p.detail.err.Error()), s.Muted.Render("esc: back"))
	}
	e := *p.detail.entry
	var details bytes.Buffer
	if err := json.Indent(&details, e.Details, "", "  "); err != nil {
		details.Write(e.Details)
	}
	fields := [][2]string{
		// ids an agent chose are masked when secret-shaped, as in the table
		{"seq", fmt.Sprint(e.Seq)}, {"time", e.Time}, {"actor", preview.MaskIdentifier(e.Actor)}, {"event", e.Event},
		{"task_id", preview.MaskIdentifier(e.TaskID)}, {"capability", e.Capability}, {"target", e.Target},
		{"token_jti", preview.MaskIdentifier(e.TokenJTI)},
		{"success", fmt.Sprint(e.Success)}, {"error_code", e.ErrorCode},
		{"content_hash_before", e.ContentHashBefore}, {"content_hash_after", e.ContentHashAfter},
		{"prev", e.Prev}, {"hash", e.Hash},
	}
	out := []string{s.Title.Render(fmt.Sprintf("Entry #%d", e.Seq)) + s.Muted.Render("  (esc: back, ↑/↓ scroll)")}
	out = append(out, why...)
	for _, f := range fields {
		label := s.Label.Render(fmt.Sprintf("%-20s", f[0]))
		wrapped := panes.Wrap(safetext.Line(f[1]), max(w-21, 1))
		if len(wrapped) == 0 {
			wrapped = []string{""}
		}
		out = append(out, label+" "+wrapped[0])
		for _, more := range wrapped[1:] {
			out = append(out, strings.Repeat(" ", 21)+more)
		}
	}
	out = append(out, s.Label.Render("details"))
	for _, l := range strings.Split(details.String(), "\n") {
		out = append(out, panes.Wrap(safetext.Line(l), max(w-2, 1))...)
	}
	return out
}
