// Package approvals is the Approvals screen: the queue of pending tasks with
// countdowns, the masked preview of the selected task's exact request, and
// the approve (confirm, default No) and deny (with reason) dialogs.
package approvals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/preview"
	"github.com/vigil-dev/vigil/themes"
)

// Options configure the pane.
type Options struct {
	Queue     *approval.Queue // nil when the engine could not start
	QueueErr  error           // why, shown in place of the queue
	TasksDir  string          // watched for tasks arriving and leaving
	AuditPath string          // watched: every decision made elsewhere appends to it
	InboxDir  string          // watched for dropped manifests
	Operator  string          // operator:<user>
	Now       func() time.Time
	Bell      bool
	// Tick is how often countdowns refresh; 0 means every second.
	Tick time.Duration
}

type (
	listMsg struct {
		gen  int
		list []approval.Record
		gone []approval.Record // were pending at the last reload, are not now
		err  error
	}
	viewMsg struct {
		gen  int
		id   string
		view approval.View
		err  error
	}
	decidedMsg struct {
		id  string
		rec approval.Record
		res *task.Result
		err error
	}
	changedMsg struct{ watcher int }
	tickMsg    struct{}
)

// Keys are the pane's bindings.
type Keys struct {
	Up, Down, Approve, Deny, ScrollUp, ScrollDown, Refresh key.Binding
}

func defaultKeys() Keys {
	b := func(k []string, h, d string) key.Binding {
		return key.NewBinding(key.WithKeys(k...), key.WithHelp(h, d))
	}
	return Keys{
		Up: b([]string{"up", "k"}, "↑/k", "previous task"), Down: b([]string{"down", "j"}, "↓/j", "next task"),
		Approve: b([]string{"a"}, "a", "approve…"), Deny: b([]string{"d"}, "d", "deny…"),
		ScrollUp: b([]string{"pgup", "K"}, "pgup/K", "scroll preview up"), ScrollDown: b([]string{"pgdown", "J", "space"}, "pgdn/J", "scroll preview down"),
		Refresh: b([]string{"ctrl+r"}, "ctrl+r", "refresh"),
	}
}

// Pane is the Approvals screen.
type Pane struct {
	o      Options
	styles *themes.Styles
	keys   Keys

	list    []approval.Record
	listErr error
	gen     int
	sel     int
	selID   string

	view    *approval.View
	viewErr error
	scroll  int

	confirm *confirmDialog
	deny    *denyDialog
	notice  string // a decision's outcome or "decided elsewhere"
	// graceUntil swallows keys after the selection changed under the person
	// (a task arrived or left while they were typing).
	graceUntil time.Time
	busy       bool
	loading    bool // a reload is in flight
	dirty      bool // another reload was asked for meanwhile
	viewAge    int  // reloads since the preview was read
	// lastDecided is the task this pane decided last: its leaving the queue
	// is not news.
	lastDecided string

	watchers []*panes.Watcher
	known    map[string]bool
}

// New builds the pane.
func New(o Options, styles *themes.Styles) *Pane {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Tick == 0 {
		o.Tick = time.Second
	}
	return &Pane{o: o, styles: styles, keys: defaultKeys()}
}

func (p *Pane) ID() string                 { return "approvals" }
func (p *Pane) Title() string              { return "Approvals" }
func (p *Pane) SetStyles(s *themes.Styles) { p.styles = s }
func (p *Pane) Capturing() bool            { return p.confirm != nil || p.deny != nil }

// Badge is the number of pending tasks.
func (p *Pane) Badge() string {
	if len(p.list) == 0 {
		return ""
	}
	return fmt.Sprint(len(p.list))
}

// Init loads the queue and starts watching for changes.
func (p *Pane) Init() tea.Cmd {
	if p.o.Queue == nil {
		return nil
	}
	cmds := []tea.Cmd{p.requestReload(), p.tick()}
	type watch struct{ dir, name string }
	watches := []watch{{p.o.TasksDir, ""}, {filepath.Join(p.o.InboxDir, "new"), ""}}
	if p.o.AuditPath != "" {
		watches = append(watches, watch{filepath.Dir(p.o.AuditPath), filepath.Base(p.o.AuditPath)})
	}
	for _, wt := range watches {
		if wt.dir == "" || wt.dir == "." {
			continue
		}
		if w, err := panes.Watch(wt.dir, wt.name); err == nil {
			p.watchers = append(p.watchers, w)
			cmds = append(cmds, w.Wait(changedMsg{watcher: len(p.watchers) - 1}))
		}
	}
	return tea.Batch(cmds...)
}

// Close stops the watchers.
func (p *Pane) Close() {
	for _, w := range p.watchers {
		w.Close()
	}
}

func (p *Pane) tick() tea.Cmd {
	return tea.Tick(p.o.Tick, func(time.Time) tea.Msg { return tickMsg{} })
}

// requestReload starts a reload unless one is in flight, in which case
// another follows it: reloads never pile up behind a slow disk or device.
func (p *Pane) requestReload() tea.Cmd {
	if p.loading {
		p.dirty = true
		return nil
	}
	p.loading = true
	return p.reload()
}

// reload sweeps the inbox and lists pending tasks off the UI goroutine.
func (p *Pane) reload() tea.Cmd {
	p.gen++
	gen, q := p.gen, p.o.Queue
	before := make([]string, len(p.list))
	for i, r := range p.list {
		before[i] = r.TaskID
	}
	return func() tea.Msg {
		_, err := q.SweepInbox(context.Background())
		list, lerr := q.Pending()
		msg := listMsg{gen: gen, list: list, err: errors.Join(err, lerr)}
		still := map[string]bool{}
		for _, r := range list {
			still[r.TaskID] = true
		}
		for _, id := range before {
			if !still[id] {
				if r, err := q.Get(id); err == nil {
					msg.gone = append(msg.gone, r)
				}
			}
		}
		return msg
	}
}

func (p *Pane) loadView(id string) tea.Cmd {
	gen, q := p.gen, p.o.Queue
	return func() tea.Msg {
		v, err := q.Preview(context.Background(), id)
		return viewMsg{gen: gen, id: id, view: v, err: err}
	}
}

// Update handles the pane's messages and, when focused, its keys.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case listMsg:
		p.loading = false
		cmd := p.applyList(msg)
		if p.dirty {
			p.dirty = false
			cmd = tea.Batch(cmd, p.requestReload())
		}
		return cmd
	case viewMsg:
		if msg.id != p.selID {
			return nil
		}
		if msg.err != nil {
			p.view, p.viewErr = nil, msg.err
		} else {
			v := msg.view
			p.view, p.viewErr = &v, nil
		}
	case decidedMsg:
		p.busy, p.lastDecided = false, msg.id
		p.notice = p.describeDecision(msg)
		return p.requestReload()
	case changedMsg:
		// re-arm only the watcher that fired: one waiter per watcher
		var next tea.Cmd
		if msg.watcher >= 0 && msg.watcher < len(p.watchers) {
			next = p.watchers[msg.watcher].Wait(msg)
		}
		return tea.Batch(next, p.requestReload())
	case tickMsg:
		// countdowns redraw; overdue tasks expire through the reload
		return tea.Batch(p.tick(), p.requestReload())
	case tea.MouseWheelMsg:
		if msg.Button == tea.MouseWheelUp {
			p.scroll = max(p.scroll-3, 0)
		} else if msg.Button == tea.MouseWheelDown {
			p.scroll += 3
		}
	case tea.KeyPressMsg:
		return p.handleKey(msg)
	}
	return nil
}

func (p *Pane) applyList(msg listMsg) tea.Cmd {
	p.listErr = msg.err
	old := p.selID
	arrived := false
	if p.known == nil {
		p.known = map[string]bool{}
		for _, r := range msg.list {
			p.known[r.TaskID] = true
		}
	} else {
		for _, r := range msg.list {
			if !p.known[r.TaskID] {
				arrived = true
				p.known[r.TaskID] = true
			}
		}
	}
	p.list = msg.list
	// keep the selection on the same task when it is still there
	p.sel = min(p.sel, max(len(p.list)-1, 0))
	for i, r := range p.list {
		if r.TaskID == old {
			p.sel = i
		}
	}
	p.selID = ""
	if len(p.list) > 0 {
		p.selID = p.list[p.sel].TaskID
	}
	var cmds []tea.Cmd
	if p.selID != old {
		p.scroll = 0
		p.view, p.viewErr = nil, nil
		p.graceUntil = p.o.Now().Add(Grace)
	}
	// say what became of tasks that left the queue without this pane deciding
	for _, r := range msg.gone {
		if r.TaskID == p.lastDecided {
			continue
		}
		switch r.State {
		case approval.Expired:
			p.notice = fmt.Sprintf("%s expired without a decision (APPROVAL_TIMEOUT)", r.TaskID)
		default:
			by := r.DecidedBy
			if by == "" {
				by = "another window"
			}
			p.notice = fmt.Sprintf("%s was decided elsewhere: %s by %s", r.TaskID, r.State, by)
		}
	}
	// a dialog whose task was decided elsewhere closes itself
	if id := p.dialogTask(); id != "" && !p.pending(id) {
		p.confirm, p.deny = nil, nil
		if p.notice == "" {
			p.notice = fmt.Sprintf("%s was decided elsewhere", id)
		}
	}
	// the preview (and the device state in its effect) is re-read when the
	// selection changes and every few reloads, not on every tick
	p.viewAge++
	if p.selID != "" && (p.selID != old || p.view == nil || p.viewAge >= 5) {
		p.viewAge = 0
		cmds = append(cmds, p.loadView(p.selID))
	}
	if arrived && p.o.Bell {
		cmds = append(cmds, tea.Raw("\a"))
	}
	return tea.Batch(cmds...)
}

func (p *Pane) pending(id string) bool {
	for _, r := range p.list {
		if r.TaskID == id {
			return true
		}
	}
	return false
}

func (p *Pane) dialogTask() string {
	switch {
	case p.confirm != nil:
		return p.confirm.taskID
	case p.deny != nil:
		return p.deny.taskID
	}
	return ""
}

func (p *Pane) describeDecision(m decidedMsg) string {
	var de *approval.DecidedError
	switch {
	case errors.As(m.err, &de):
		return de.Error()
	case m.err != nil:
		return "error: " + m.err.Error()
	case m.res != nil && m.res.Status == task.StatusSuccess:
		return fmt.Sprintf("%s approved and executed", m.id)
	case m.res != nil && m.res.Error != nil:
		return fmt.Sprintf("%s %s: %s", m.id, m.rec.State, m.res.Error.Code)
	}
	return fmt.Sprintf("%s %s", m.id, m.rec.State)
}

func (p *Pane) decide(id string, d approval.Decision) tea.Cmd {
	p.busy = true
	q := p.o.Queue
	return func() tea.Msg {
		rec, res, err := q.Decide(context.Background(), id, d)
		return decidedMsg{id: id, rec: rec, res: res, err: err}
	}
}

func (p *Pane) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	now := p.o.Now()
	if p.confirm != nil {
		switch in := p.confirm.Update(msg, now).(type) {
		case Approve:
			p.confirm = nil
			return p.decide(in.TaskID, approval.Decision{Approve: true, By: p.o.Operator, PreviewHash: in.PreviewHash})
		case Close:
			p.confirm = nil
			p.notice = "not approved"
		}
		return nil
	}
	if p.deny != nil {
		switch in := p.deny.Update(msg, now).(type) {
		case Deny:
			p.deny = nil
			return p.decide(in.TaskID, approval.Decision{Approve: false, By: p.o.Operator, Reason: in.Reason})
		case Close:
			p.deny = nil
		}
		return nil
	}
	k := p.keys
	switch {
	case key.Matches(msg, k.Up):
		return p.select_(p.sel - 1)
	case key.Matches(msg, k.Down):
		return p.select_(p.sel + 1)
	case key.Matches(msg, k.ScrollUp):
		p.scroll = max(p.scroll-5, 0)
	case key.Matches(msg, k.ScrollDown):
		p.scroll += 5
	case key.Matches(msg, k.Refresh):
		return p.requestReload()
	case key.Matches(msg, k.Approve), key.Matches(msg, k.Deny):
		// a task that just moved under the cursor is not decided on by a stray key
		if now.Before(p.graceUntil) || p.busy || p.view == nil || p.selID == "" || p.view.Record.TaskID != p.selID {
			return nil
		}
		p.notice = ""
		if key.Matches(msg, k.Approve) {
			p.confirm = &confirmDialog{taskID: p.selID, previewHash: p.view.BindingHash, openedAt: now}
			return nil
		}
		p.deny = newDenyDialog(p.selID, now)
	}
	return nil
}

func (p *Pane) select_(i int) tea.Cmd {
	if i < 0 || i >= len(p.list) || i == p.sel {
		return nil
	}
	p.sel, p.selID, p.scroll = i, p.list[i].TaskID, 0
	p.view, p.viewErr = nil, nil
	return p.loadView(p.selID)
}

// Busy reports a decision being carried out (quitting would interrupt it).
func (p *Pane) Busy() bool { return p.busy }

// ShortHelp is the status bar's keys.
func (p *Pane) ShortHelp() []key.Binding {
	if p.confirm != nil {
		return []key.Binding{key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "approve")),
			key.NewBinding(key.WithKeys("n"), key.WithHelp("any other key", "cancel"))}
	}
	if p.deny != nil {
		return []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "deny")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel"))}
	}
	return []key.Binding{p.keys.Approve, p.keys.Deny, p.keys.Down, p.keys.ScrollDown}
}

// FullHelp is the ? overlay's keys.
func (p *Pane) FullHelp() [][]key.Binding {
	k := p.keys
	return [][]key.Binding{{k.Up, k.Down, k.ScrollUp, k.ScrollDown}, {k.Approve, k.Deny, k.Refresh}}
}

// View renders the queue above the selected task's preview.
func (p *Pane) View(w, h int) string {
	s := p.styles
	if w <= 0 || h <= 0 {
		return panes.Block(nil, w, h)
	}
	if p.o.Queue == nil {
		msg := "approvals are unavailable"
		if p.o.QueueErr != nil {
			msg += ": " + p.o.QueueErr.Error()
		}
		return panes.Block(panes.Wrap(s.Err.Render(msg), w), w, h)
	}
	var lines []string
	title := s.Heading.Render(fmt.Sprintf("Pending approvals (%d)", len(p.list)))
	if p.notice != "" {
		title += "  " + s.Warning.Render(p.notice)
	}
	lines = append(lines, title)
	if p.listErr != nil {
		lines = append(lines, s.Err.Render("queue error: "+p.listErr.Error()))
	}
	if len(p.list) == 0 {
		lines = append(lines, s.Muted.Render("nothing waiting: agents' mutating actions appear here for you to approve or deny"))
		return panes.Block(lines, w, h)
	}
	listH := min(len(p.list), max(h/3-1, 1))
	top := panes.Scroll(0, p.sel, listH, len(p.list))
	now := p.o.Now()
	for i := top; i < top+listH && i < len(p.list); i++ {
		lines = append(lines, p.queueRow(p.list[i], i == p.sel, now, w))
	}
	lines = append(lines, s.Subtle.Render(strings.Repeat("─", max(w, 0))))
	detailH := max(h-len(lines), 0)
	var detail []string
	switch {
	case p.viewErr != nil:
		detail = panes.Wrap(s.Err.Render("cannot preview: "+p.viewErr.Error()), w)
	case p.view == nil:
		detail = []string{s.Muted.Render("loading preview…")}
	default:
		detail = p.previewLines(*p.view, w)
	}
	if dlg := p.dialogLines(w); len(dlg) > 0 {
		// the dialog sits at the bottom, over the preview's tail
		keep := max(detailH-len(dlg), 0)
		p.scroll = min(p.scroll, max(len(detail)-keep, 0))
		detail = append(window(detail, p.scroll, keep), dlg...)
	} else {
		p.scroll = min(p.scroll, max(len(detail)-detailH, 0))
		detail = window(detail, p.scroll, detailH)
		if detailH > 0 && len(detail) == detailH && p.scroll+detailH < len(p.fullLen(w)) {
			detail[detailH-1] = s.Muted.Render(fmt.Sprintf("↓ more below (%d lines) — pgdn/J to scroll", len(p.fullLen(w))-p.scroll-detailH+1))
		}
	}
	lines = append(lines, detail...)
	return panes.Block(lines, w, h)
}

func (p *Pane) fullLen(w int) []string {
	if p.view == nil {
		return nil
	}
	return p.previewLines(*p.view, w)
}

func window(lines []string, from, n int) []string {
	if from > len(lines) {
		from = len(lines)
	}
	end := min(from+n, len(lines))
	return lines[from:end]
}

func (p *Pane) queueRow(r approval.Record, selected bool, now time.Time, w int) string {
	s := p.styles
	left := r.ExpiresAt.Sub(now)
	cd := countdown(left)
	var cdStyled string
	switch {
	case left <= time.Minute:
		cdStyled = s.Err.Render(cd)
	case left <= 3*time.Minute:
		cdStyled = s.Warning.Render(cd)
	default:
		cdStyled = s.Success.Render(cd)
	}
	age := countdown(now.Sub(r.SubmittedAt))
	cursor := "  "
	if selected {
		cursor = s.Cursor.Render("▸ ")
	}
	body := fmt.Sprintf("%-18s %-16s %-12s %-14s age %-6s", panes.Truncate(r.TaskID, 18), panes.Truncate(r.Agent, 16),
		r.CapabilityID, panes.Truncate(r.Device, 14), age)
	line := cursor + body + " expires in " + cdStyled
	if selected {
		return s.Selected.Render(panes.Fit(line, w))
	}
	return line
}

func countdown(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	d = d.Truncate(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

// previewLines renders the masked request as HTTP, then the effect and lease.
// Everything wraps: nothing is cut off without a way to scroll to it.
func (p *Pane) previewLines(v approval.View, w int) []string {
	s := p.styles
	pv := v.Preview
	var out []string
	add := func(text string) { out = append(out, panes.Wrap(text, w)...) }
	add(s.Title.Render(pv.Method) + " " + p.maskedStyled(pv.URL, pv))
	keys := make([]string, 0, len(pv.Headers))
	for k := range pv.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		add(s.Label.Render(k+":") + " " + p.maskedStyled(pv.Headers[k], pv))
	}
	out = append(out, "")
	if pv.Raw != "" {
		for _, l := range strings.Split(pv.Raw, "\n") {
			add(p.maskedStyled(l, pv))
		}
		out = append(out, "")
	}
	add(s.Heading.Render("effect  ") + pv.EstimatedEffect)
	r := v.Record
	caps, _ := json.Marshal(r.Caps)
	add(s.Heading.Render("lease   ") + fmt.Sprintf("agent %s · jti %s · expires %s · caps %s", r.Agent, r.TokenJTI,
		r.LeaseExpires.Format(time.RFC3339), caps))
	if !v.LeaseValid {
		add(s.Err.Render("lease not valid: " + v.LeaseError))
	}
	add(s.Muted.Render(fmt.Sprintf("preview %s · submitted %s via %s", short(v.BindingHash), r.SubmittedAt.Format(time.RFC3339), r.Source)))
	return out
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// maskedStyled styles the masked values inside text apart, so the person
// sees at a glance what was hidden from them.
func (p *Pane) maskedStyled(text string, _ preview.HTTPPreview) string {
	return maskShape.ReplaceAllStringFunc(text, func(m string) string { return p.styles.Masked.Render(m) })
}

// maskShape matches what preview's masking writes: ********, ****-****-****-1234,
// ***-**-1234, sk_...wxyz, j***@example.com.
var maskShape = regexp.MustCompile(`[A-Za-z0-9_-]*\.\.\.[A-Za-z0-9]{1,4}|[A-Za-z0-9]?\*{3,}[-*]*[0-9]{0,4}(@[A-Za-z0-9.-]+)?`)

func (p *Pane) dialogLines(w int) []string {
	s := p.styles
	var body string
	switch {
	case p.confirm != nil:
		body = s.Warning.Render("Approve "+p.confirm.taskID+"?") + "  " + s.KeyName.Render("y") + " approve · " +
			s.KeyName.Render("any other key") + " cancel (default: No)"
	case p.deny != nil:
		body = s.Warning.Render("Deny "+p.deny.taskID) + "\n" + p.deny.input.View()
		if p.deny.err != "" {
			body += "\n" + s.Err.Render(p.deny.err)
		}
		body += "\n" + s.Muted.Render("enter: deny · esc: cancel")
	default:
		return nil
	}
	box := s.Dialog.Width(max(w, 4)).Render(body)
	return strings.Split(box, "\n")
}
