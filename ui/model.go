// Package ui is Vigil's root Bubble Tea model: tabs, status bar, help overlay
// and key routing. Screens live in panes/; this package only arranges them.
package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/themes"
)

// MinWidth and MinHeight are the smallest terminal Vigil draws a full screen in.
const (
	MinWidth  = 40
	MinHeight = 10
)

// Options configures the root model.
type Options struct {
	Panes []panes.Pane
	// Context is the program's: panes' background work ends with it (nil:
	// context.Background()).
	Context context.Context
	Theme   string // auto, dark, light, high-contrast
	// Start is the index of the pane focused first.
	Start int
	// JobControl reports whether ctrl+z can suspend (the parent shell will
	// resume Vigil); nil asks the process group (hasJobControl).
	JobControl func() bool
	// WindowTitle is what the terminal's title is set back to on exit
	// (the title Vigil found); "" leaves it as Vigil set it.
	WindowTitle string
	// MouseOff starts with mouse tracking off ([ui] mouse = false): the
	// terminal's own selection works, clicks and the wheel do not; alt+m
	// switches.
	MouseOff bool
}

// Model is the root model. It routes; panes do the work.
type Model struct {
	ctx      context.Context
	panes    []panes.Pane
	active   int
	width    int
	height   int
	theme    string
	styles   *themes.Styles
	showHelp bool
	// helpView scrolls the overlay when it is taller than the screen;
	// helpLen is its length as last drawn, to clamp each scroll at once
	helpView panes.Viewport
	helpLen  int
	// notice is why the last key did nothing (a disabled row), or what a
	// switch did, shown in the footer until the next key (or noticeFor)
	notice     string
	noticeGen  int // which notice a noticeExpiredMsg is for
	mouse      bool
	jobControl func() bool
	// quitArmed: q was pressed while an action ran; the next q quits
	quitArmed bool
	keys      globalKeys
	help      help.Model
}

// New builds the root model. With theme "auto" it starts dark and asks the
// terminal for its background colour.
func New(o Options) *Model {
	m := &Model{ctx: o.Context, panes: o.Panes, theme: o.Theme, help: help.New(), jobControl: o.JobControl, mouse: !o.MouseOff}
	if m.ctx == nil {
		m.ctx = context.Background()
	}
	if m.jobControl == nil {
		m.jobControl = hasJobControl
	}
	m.keys = m.newGlobalKeys()
	if o.Start >= 0 && o.Start < len(o.Panes) {
		m.active = o.Start
	}
	m.setStyles(themes.Resolve(o.Theme, true))
	return m
}

func (m *Model) setStyles(s *themes.Styles) {
	m.styles = s
	m.help.Styles.ShortKey = s.KeyName
	m.help.Styles.FullKey = s.KeyName
	m.help.Styles.ShortDesc = s.KeyHint
	m.help.Styles.FullDesc = s.KeyHint
	m.help.Styles.ShortSeparator = s.Subtle
	m.help.Styles.FullSeparator = s.Subtle
	for _, p := range m.panes {
		p.SetStyles(s)
	}
}

// Init starts every pane and, for the auto theme, asks for the background.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{}
	if m.theme == "" || m.theme == "auto" {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	for _, p := range m.panes {
		cmds = append(cmds, p.Init(m.ctx))
	}
	return tea.Batch(cmds...)
}

// Active is the focused pane.
func (m *Model) Active() panes.Pane {
	if len(m.panes) == 0 {
		return nil
	}
	return m.panes[m.active]
}

// Update routes: quit → help overlay → capturing pane → global keys → pane.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
		cmd := m.broadcast(msg)
		m.legible() // a pane that becomes legible again re-arms its grace period
		return m, cmd
	case tea.BackgroundColorMsg:
		if m.theme == "" || m.theme == "auto" {
			m.setStyles(themes.Resolve("auto", msg.IsDark()))
		}
		return m, nil
	case tea.KeyPressMsg:
		m.notice = ""
		return m, m.handleKey(msg)
	case panes.KeyDisabledMsg:
		m.setNotice(msg.Key + ": " + msg.Reason)
		return m, nil
	case noticeExpiredMsg:
		if msg.gen == m.noticeGen {
			m.notice = ""
		}
		return m, nil
	case tea.MouseClickMsg:
		return m, m.click(msg)
	case tea.MouseWheelMsg:
		if m.showHelp && !m.tooSmall() {
			m.helpView.Wheel(msg) // the overlay scrolls; the pane under it does not
			m.clampHelp()
			return m, nil
		}
		if p := m.Active(); p != nil && m.legible() {
			msg.Y-- // the pane's own rows, as for a click: it scrolls what is under the pointer
			return m, p.Update(msg)
		}
		return m, nil
	case tea.PasteMsg, tea.PasteStartMsg, tea.PasteEndMsg:
		// a paste is typing: like a key, it goes to the focused pane only,
		// and only while the screen shows what it would land in
		if p := m.Active(); p != nil && !m.showHelp && m.legible() {
			return m, p.Update(msg)
		}
		return m, nil
	}
	return m, m.broadcast(msg)
}

func (m *Model) broadcast(msg tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	for _, p := range m.panes {
		if c := p.Update(msg); c != nil {
			cmds = append(cmds, c)
		}
	}
	return tea.Batch(cmds...)
}

// click on a tab focuses its pane; a click below goes to the focused pane
// in its own coordinates (Y 0 is the pane's first line), while the screen
// shows it; a click on the overlay closes it.
func (m *Model) click(msg tea.MouseClickMsg) tea.Cmd {
	if m.showHelp {
		m.showHelp = false
		return nil
	}
	if !m.legible() || msg.Button != tea.MouseLeft {
		return nil
	}
	if msg.Y == 0 {
		if i := m.tabAt(msg.X); i >= 0 {
			m.focus(i)
		}
		return nil
	}
	if msg.Y > m.height-2 {
		return nil // the status line
	}
	p := m.Active()
	if p == nil {
		return nil
	}
	msg.Y--
	return p.Update(msg)
}

// busier is a pane with work that quitting would interrupt.
type busier interface{ Busy() bool }

func (m *Model) busy() bool {
	for _, p := range m.panes {
		if b, ok := p.(busier); ok && b.Busy() {
			return true
		}
	}
	return false
}

func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	if !key.Matches(msg, quitKey) {
		m.quitArmed = false
	}
	if key.Matches(msg, forceQuit.Binding) {
		return tea.Quit
	}
	if !m.legible() {
		// No key acts on what the screen does not show: nothing is typed
		// into a hidden field, no hidden prompt is answered. Only q quits.
		if key.Matches(msg, quitKey) {
			return m.quit()
		}
		return nil
	}
	if m.showHelp {
		return m.helpKey(msg)
	}
	if cmd, ok := m.keys.jumpAlt.Dispatch(msg); ok {
		return cmd
	}
	p := m.Active()
	if p != nil && p.Capturing() {
		return p.Update(msg)
	}
	if cmd, ok := m.keys.rows.Dispatch(msg); ok {
		return cmd
	}
	if p != nil {
		return p.Update(msg)
	}
	return nil
}

// helpKey scrolls an overlay taller than the screen with ↑/↓/pgup/pgdn
// (j/k too); any other key closes it and never reaches a pane.
func (m *Model) helpKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "down", "j":
		m.helpView.Scroll(1)
	case "up", "k":
		m.helpView.Scroll(-1)
	case "pgdown":
		m.helpView.Page(1)
	case "pgup":
		m.helpView.Page(-1)
	default:
		m.showHelp = false
	}
	m.clampHelp()
	return nil
}

// clampHelp keeps the overlay's offset within its text at once, not only
// when next drawn: scrolling an overlay that fits (or past its end) is not
// remembered, so a resize that makes it taller than the screen opens it
// at its title rather than wherever those scrolls added up to.
func (m *Model) clampHelp() {
	m.helpView.Range(m.helpLen, max(m.height-3, 0)) // the body less the hint line
}

// quit quits, but asks twice while an approved action runs: it would be cut
// off (and later marked interrupted); ctrl+c still quits at once.
func (m *Model) quit() tea.Cmd {
	if m.busy() && !m.quitArmed {
		m.quitArmed = true
		return nil
	}
	return tea.Quit
}

// Legible reports whether keys act on the focused pane now (see legible).
func (m *Model) Legible() bool { return m.legible() }

// tooSmall reports a terminal below the minimum size (or not known yet).
func (m *Model) tooSmall() bool {
	return m.width < MinWidth || m.height < MinHeight
}

// legible reports whether the screen shows the focused pane well enough for
// keys to act on it: the terminal is at least the minimum size, the help
// overlay does not hide the pane (any key then only closes it), and the pane,
// asked about its area, says it shows everything a key acts on.
func (m *Model) legible() bool {
	p := m.Active()
	lg, ok := p.(panes.Legibler)
	if m.tooSmall() {
		if ok {
			lg.Legible(0, 0)
		}
		return false
	}
	if !ok || m.showHelp {
		return true
	}
	return lg.Legible(m.width, m.height-2)
}

func (m *Model) focus(i int) {
	if i >= 0 && i < len(m.panes) && i != m.active {
		m.hide()
		m.active = i
	}
}

// hide tells the focused pane that the screen stops showing it (another
// pane or the help overlay takes its place): asked about an area of 0×0,
// a Legibler takes its next frame as appearing anew, so a prompt shown
// again after a pane switch has its grace period like a new one.
func (m *Model) hide() {
	if lg, ok := m.Active().(panes.Legibler); ok {
		lg.Legible(0, 0)
	}
	if l, ok := m.Active().(panes.Leaver); ok {
		l.Leave()
	}
	m.notice = "" // it spoke of the view being left
}

// View draws the screen; below the minimum size, a one-line notice.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeNone
	if m.mouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	v.WindowTitle = "Vigil"
	return v
}

// Render is the screen as a string (the View's content).
func (m *Model) Render() string {
	w, h := m.width, m.height
	if w <= 0 || h <= 0 {
		return ""
	}
	if m.tooSmall() {
		return panes.Truncate(fmt.Sprintf("terminal too small: %d×%d, need %d×%d", w, h, MinWidth, MinHeight), w)
	}
	tabs := m.renderTabs(w)
	status := m.renderStatus(w)
	if m.quitArmed {
		status = m.styles.Warning.Render(panes.Fit("an approved action is running — press q again to quit anyway", w))
	} else if !m.showHelp && !m.legible() {
		status = m.styles.Warning.Render(panes.Fit("keys paused: the window is too small to show what they act on — enlarge it (q quits)", w))
	}
	bodyH := h - 2
	var body string
	if m.showHelp {
		body = m.renderHelp(w, bodyH)
	} else if p := m.Active(); p != nil {
		body = p.View(w, bodyH)
	} else {
		body = panes.Block(nil, w, bodyH)
	}
	return tabs + "\n" + body + "\n" + status
}

func (m *Model) renderTabs(w int) string {
	brand, parts, sep := m.tabParts()
	return panes.Fit(brand+strings.Join(parts, sep), w)
}

// tabParts is the tab bar's pieces: the brand, each tab, the separator.
func (m *Model) tabParts() (brand string, parts []string, sep string) {
	for i, p := range m.panes {
		label := fmt.Sprintf("%d %s", i+1, p.Title())
		if b := p.Badge(); b != "" {
			label += " " + m.styles.Badge.Render(" "+b+" ")
		}
		if i == m.active {
			parts = append(parts, m.styles.TabActive.Render(label))
		} else {
			parts = append(parts, m.styles.Tab.Render(label))
		}
	}
	return m.styles.Title.Render("vigil") + " ", parts, m.styles.Subtle.Render("│")
}

// tabAt is the pane whose tab covers column x of the tab bar, or -1.
func (m *Model) tabAt(x int) int {
	brand, parts, sep := m.tabParts()
	at := lipgloss.Width(brand)
	for i, p := range parts {
		w := lipgloss.Width(p)
		if x >= at && x < at+w {
			return i
		}
		at += w + lipgloss.Width(sep)
	}
	return -1
}

func (m *Model) renderStatus(w int) string {
	if m.notice != "" {
		// a key that did nothing says why
		return m.styles.Warning.Render(panes.Fit(m.notice, w))
	}
	var own, tail []key.Binding
	p := m.Active()
	if p != nil {
		own = p.ShortHelp()
	}
	if !m.mouse {
		tail = append(tail, mouseOnHint)
	}
	if p != nil && p.Capturing() {
		// the pane has the keyboard: tab and q are typed, only ctrl+c quits
		tail = append(tail, forceQuit.Binding)
	} else {
		tail = append(tail, m.keys.rows.Footer()...)
	}
	// Too many keys for the width: the pane's last ones go (the overlay
	// lists them all), not the global ones at the end — help's own
	// truncation would cut "? help" and "q quit" off behind a "…".
	m.help.SetWidth(0)
	line := m.help.ShortHelpView(append(append([]key.Binding{}, own...), tail...))
	for len(own) > 0 && lipgloss.Width(line) > w {
		own = own[:len(own)-1]
		line = m.help.ShortHelpView(append(append([]key.Binding{}, own...), tail...))
	}
	m.help.SetWidth(w)
	return panes.Fit(line, w)
}

// renderHelp is the ? overlay: the global keys first (so a small screen
// always shows them), then the pane's groups, flowed into as many bands of
// columns as the width needs, scrolled when taller than the screen.
func (m *Model) renderHelp(w, h int) string {
	var global []key.Binding // one column: both global sections
	for _, s := range m.keys.sections() {
		global = append(global, s.Rows.Help()...)
	}
	groups := [][]key.Binding{global}
	title := "Keys"
	if p := m.Active(); p != nil {
		groups = append(groups, p.FullHelp()...)
		title = "Keys — " + p.Title()
	}
	var lines []string
	lines = append(lines, m.styles.Heading.Render(title), "")
	lines = append(lines, m.helpBands(groups, w-4)...)
	lines = append(lines, "")
	hint := "press any key to close"
	m.helpLen = len(lines)
	if len(lines)+1 > h {
		// the hint stays on the last line; the rest scrolls
		hint = "↑/↓ scroll · any other key closes"
		lines = append([]string{}, m.helpView.Window(lines, h-1)...)
	}
	lines = append(lines, m.styles.Muted.Render(hint))
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return panes.Block(lines, w, h)
}

// helpBands lays the groups out as columns side by side while they fit in
// w, starting a new band below when the next would not.
func (m *Model) helpBands(groups [][]key.Binding, w int) []string {
	var out, band []string
	bandW := 0
	flush := func() {
		if len(band) > 0 {
			if len(out) > 0 {
				out = append(out, "")
			}
			out = append(out, band...)
		}
		band, bandW = nil, 0
	}
	for _, g := range groups {
		col := m.helpColumn(g)
		if len(col) == 0 {
			continue
		}
		cw := 0
		for _, l := range col {
			cw = max(cw, lipgloss.Width(l))
		}
		if bandW > 0 && bandW+3+cw > w {
			flush()
		}
		if bandW > 0 {
			for len(band) < len(col) {
				band = append(band, strings.Repeat(" ", bandW))
			}
			for i := range band {
				c := ""
				if i < len(col) {
					c = col[i]
				}
				band[i] = panes.Pad(band[i], bandW) + "   " + c
			}
			bandW += 3 + cw
		} else {
			band, bandW = col, cw
		}
	}
	flush()
	return out
}

// helpColumn is one group as aligned "key  description" lines.
func (m *Model) helpColumn(g []key.Binding) []string {
	kw := 0
	for _, b := range g {
		kw = max(kw, lipgloss.Width(b.Help().Key))
	}
	var col []string
	for _, b := range g {
		h := b.Help()
		if h.Key == "" && h.Desc == "" {
			continue
		}
		col = append(col, m.styles.KeyName.Render(panes.Pad(h.Key, kw))+" "+m.styles.KeyHint.Render(h.Desc))
	}
	return col
}

// Mouse reports whether mouse tracking is on (clicks and the wheel reach
// Vigil; the terminal's own selection then needs shift in most terminals).
func (m *Model) Mouse() bool { return m.mouse }

// noticeFor is how long a switch's notice stays in the footer when no key
// replaces it first.
const noticeFor = 4 * time.Second

// noticeExpiredMsg clears the notice it was set for.
type noticeExpiredMsg struct{ gen int }

// setNotice shows s in the footer; a newer notice outlives an older one's
// timer.
func (m *Model) setNotice(s string) tea.Cmd {
	m.notice = s
	m.noticeGen++
	gen := m.noticeGen
	return tea.Tick(noticeFor, func(time.Time) tea.Msg { return noticeExpiredMsg{gen: gen} })
}

// toggleMouse switches mouse tracking (alt+m) and says what the mouse now
// does: with tracking off the terminal selects and copies text itself.
func (m *Model) toggleMouse() tea.Cmd {
	m.mouse = !m.mouse
	if m.mouse {
		return m.setNotice("mouse on: clicks and the wheel act (shift+drag selects text) · alt+m: off")
	}
	return m.setNotice("mouse off: the terminal selects text; alt+m turns clicks back on")
}

// mouseOnHint is the footer's reminder while tracking is off.
var mouseOnHint = panes.Bind("alt+m", "mouse on", "alt+m")
