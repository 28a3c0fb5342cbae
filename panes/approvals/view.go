package approvalspane

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
)

// previewTop is how many lines of the preview must at least be on screen
// before a key may decide on it; and never fewer than its warnings and the
// request line under them (previewCache.top).
const previewTop = 3

// safe shows untrusted text on one line with its escapes in the warning style.
func (p *Pane) safe(s string) string {
	return safetext.Inspect(s).Render(func(e string) string { return p.styles.Warning.Render(e) })
}

// part is a piece of a laid-out line: text of ours, or text from outside
// (shown through safetext).
type part struct {
	s         string
	untrusted bool
}

func ours(s string) part   { return part{s: s} }
func theirs(s string) part { return part{s: s, untrusted: true} }

// field lays label and parts out in lines of at most w cells. Escapes are
// never split across lines and are marked in the warning style; masked
// values are styled apart; the label keeps its style. It also counts the
// hidden characters of the untrusted parts.
func (p *Pane) field(w int, label string, ls lipgloss.Style, parts ...part) ([]string, int) {
	var t safetext.Text
	if label != "" {
		t.Spans = append(t.Spans, safetext.Span{Text: label})
	}
	for _, pt := range parts {
		switch {
		case !pt.untrusted && pt.s != "":
			t.Spans = append(t.Spans, safetext.Span{Text: pt.s})
		case pt.untrusted:
			it := safetext.Inspect(pt.s)
			t.Spans = append(t.Spans, it.Spans...)
			t.Hidden += it.Hidden
		}
	}
	var out []string
	for i, l := range t.Wrap(w) {
		if i == 0 && label != "" && len(l.Spans) > 0 && !l.Spans[0].Escaped && strings.HasPrefix(l.Spans[0].Text, label) {
			l.Spans[0].Text = l.Spans[0].Text[len(label):]
			out = append(out, ls.Render(label)+p.renderText(l))
			continue
		}
		out = append(out, p.renderText(l))
	}
	return out, t.Hidden
}

// renderText styles shown text: escapes as warnings, masked values apart.
func (p *Pane) renderText(t safetext.Text) string {
	var b strings.Builder
	for _, sp := range t.Spans {
		if sp.Escaped {
			b.WriteString(p.styles.Warning.Render(sp.Text))
		} else {
			b.WriteString(maskShape.ReplaceAllStringFunc(sp.Text, func(m string) string { return p.styles.Masked.Render(m) }))
		}
	}
	return b.String()
}

// maskShape matches what preview's masking writes: ********, ****-****-****-1234,
// ***-**-1234, sk_...wxyz, j***@example.com. It only styles; it removes nothing.
var maskShape = regexp.MustCompile(`[A-Za-z0-9_-]*\.\.\.[A-Za-z0-9]{1,4}|[A-Za-z0-9]?\*{3,}[-*]*[0-9]{0,4}(@[A-Za-z0-9.-]+)?`)

// uriShape finds URIs quoted in a request or effect, for their host warnings.
var uriShape = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s"'<>\\]+`)

// render lays the pane out in w×h and reports whether that shows everything
// a key acts on. It does no I/O.
func (p *Pane) render(w, h int) ([]string, bool) {
	s := p.styles
	if w <= 0 || h <= 0 {
		return nil, false
	}
	if p.o.Queue == nil {
		msg := "approvals are unavailable"
		if p.o.QueueErr != nil {
			msg += ": " + p.safe(p.o.QueueErr.Error())
		}
		lines := panes.Wrap(s.Err.Render(msg), w)
		if p.o.Reopen != nil {
			lines = append(lines, panes.Wrap(s.Muted.Render("this pane opens the queue by itself as soon as it can: no restart needed"), w)...)
		}
		return lines, true
	}
	if p.decided.shown {
		return p.renderDecided(w, h)
	}
	if p.rules.shown {
		return p.renderRules(w, h)
	}
	head := s.Heading.Render(fmt.Sprintf("Pending approvals (%d)", len(p.queue.list))) + s.Muted.Render("  v: decided") + p.rulesNote()
	if p.o.Shared != "" {
		head += s.Muted.Render("  · " + p.o.Shared)
	}
	if p.o.Via == approval.ViaSSH {
		// who the audit trail will name, on the operator's own screen
		head += s.Muted.Render("  · deciding as " + safetext.Line(p.o.Operator) + " over SSH")
	}
	if n := len(p.batch.marked); n > 0 && p.refused == "" {
		head += s.Warning.Render(fmt.Sprintf("  · %d marked", n)) + s.Muted.Render(" (A: approve them)")
	}
	lines := []string{head}
	if p.refused != "" && p.notice != p.refused {
		// how decisions are made here, whole: it replaces the keys not offered
		lines = append(lines, panes.Wrap(s.Muted.Render(p.refused), w)...)
	}
	lines = append(lines, p.noticeLines(w)...)
	lines = append(lines, p.reportLines(w)...)
	if p.listErr != nil {
		lines = append(lines, panes.Wrap(s.Err.Render("queue error: ")+p.safe(p.listErr.Error()), w)...)
	}
	if len(p.queue.list) == 0 {
		p.queue.cur.Map.Reset(0, 0, 0)
		empty := "nothing waiting: agents' mutating actions appear here for you to approve or deny"
		if p.refused != "" {
			empty = "nothing waiting: agents' mutating actions appear here"
		}
		lines = append(lines, s.Muted.Render(empty))
		return lines, true
	}
	return p.renderQueue(lines, w, h)
}

// noticeLines are the last notice, wrapped (a failure's reason is never cut
// to fit the title line), at most three lines.
func (p *Pane) noticeLines(w int) []string {
	if p.notice == "" {
		return nil
	}
	l := panes.Wrap(p.styles.Warning.Render(p.notice), w)
	if len(l) > 3 && p.notice != p.refused { // how decisions are made here is never cut
		l = l[:3]
		l[2] = panes.Truncate(l[2]+" …", w)
	}
	return l
}

// previewLines renders the masked request as HTTP, then the effect, the
// deadline and the lease. Warnings about hidden characters and look-alike
// hosts come first. Everything wraps: nothing is cut off without a way to
// scroll to it. top is how many lines the warnings and the request line take.
func (p *Pane) previewLines(v approval.View, w int) (lines []string, top int) {
	s := p.styles
	pv := v.Preview
	var body []string
	hidden := 0
	add := func(label string, ls lipgloss.Style, parts ...part) {
		lines, n := p.field(w, label, ls, parts...)
		body = append(body, lines...)
		hidden += n
	}
	add(safetext.Line(pv.Method), s.Title, ours(" "), theirs(pv.URL))
	reqLines := len(body)
	keys := make([]string, 0, len(pv.Headers))
	for k := range pv.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		add("", s.Label, theirs(k), ours(": "), theirs(pv.Headers[k]))
	}
	body = append(body, "")
	if pv.Raw != "" {
		for _, l := range strings.Split(pv.Raw, "\n") {
			add("", s.Text, theirs(strings.TrimSuffix(l, "\r")))
		}
		body = append(body, "")
	}
	add("effect  ", s.Heading, theirs(pv.EstimatedEffect))
	if deviceSilent(pv.EstimatedEffect) {
		body = append(body, panes.Wrap(s.Warning.Render("⚠ "+silentWarning), w)...)
	}
	r := v.Record
	now := p.o.Now()
	at, kind := r.Deadline()
	dl := deadlineText(r, now, false) + " (" + kind + " deadline " + at.UTC().Format(time.RFC3339) + ")"
	if kind == approval.DeadlineLease {
		dl += "; the approval timeout is later, " + r.ExpiresAt.UTC().Format(time.RFC3339)
	}
	add("deadline ", s.Heading, ours(dl))
	lease := []part{ours("agent "), theirs(shownID(r.Agent)), ours(" · jti "), theirs(shownID(r.TokenJTI)),
		ours(" · expires " + r.LeaseExpires.UTC().Format(time.RFC3339) + " · caps [")}
	for i, c := range r.Caps {
		if i > 0 {
			lease = append(lease, ours(", "))
		}
		lease = append(lease, theirs(c))
	}
	add("lease   ", s.Heading, append(lease, ours("]"))...)
	if !v.LeaseValid {
		add("lease not valid: ", s.Err, theirs(v.LeaseError))
	}
	add(fmt.Sprintf("preview %s · submitted %s via ", short(v.BindingHash), r.SubmittedAt.UTC().Format(time.RFC3339)), s.Muted, theirs(r.Source))

	warn := viewWarnings(v, hidden)
	var out []string
	for _, wmsg := range warn {
		out = append(out, panes.Wrap(s.Warning.Render("⚠ "+wmsg), w)...)
	}
	return append(out, body...), len(out) + reqLines
}

// viewWarnings are the warnings the preview shows at its top: the count of
// hidden characters in its untrusted fields, the engine's about the media
// URI, and those about every URI the request or its effect quotes (hosts
// that are numeric, look-alike or not ASCII). Already safe to show.
func viewWarnings(v approval.View, hidden int) []string {
	pv := v.Preview
	var warn []string
	if n := hidden; n > 0 {
		warn = append(warn, safetext.HiddenNote(n))
	}
	seen := map[string]bool{}
	for _, wmsg := range v.Warnings { // the engine's, about the media URI
		wmsg = safetext.Line(wmsg)
		if !seen[wmsg] {
			seen[wmsg], seen[strings.TrimPrefix(wmsg, "media_uri ")] = true, true
			warn = append(warn, wmsg)
		}
	}
	for _, src := range append([]string{pv.URL, pv.EstimatedEffect}, strings.Split(pv.Raw, "\n")...) {
		for _, u := range uriShape.FindAllString(src, -1) {
			for _, wmsg := range safetext.URLWarnings(u) {
				if wmsg == safetext.HiddenNote(safetext.Hidden(u)) {
					continue // counted in the total above
				}
				if !seen[wmsg] {
					seen[wmsg] = true
					warn = append(warn, wmsg)
				}
			}
		}
	}
	return warn
}

// stateUnknown is how the engine's preview (approval.Queue.Preview) starts
// the effect when asking the device for its state failed: "now: unknown
// (the error) → the effect".
const stateUnknown = "now: unknown ("

// silentWarning is said next to the effect and in the approve prompt when
// the device did not answer the preview's question: approving is still
// allowed (the device may be back), but the person is told it will likely
// fail before they approve, not only after.
const silentWarning = "the device did not answer just now: approving will likely fail"

// deviceSilent reports whether a preview's effect says the device did not
// answer when asked for its state.
func deviceSilent(effect string) bool { return strings.HasPrefix(effect, stateUnknown) }

func short(h string) string {
	h = safetext.Line(h)
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// outcomeWord names a state for a person.
func outcomeWord(st approval.State) string {
	switch st {
	case approval.Done:
		return "executed"
	case approval.Executing:
		return "executing…"
	}
	return string(st)
}
