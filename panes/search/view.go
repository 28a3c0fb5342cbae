package searchpane

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"

	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
)

// View draws the composer, the results (with the preview beside or below
// them) and the status line in exactly w×h.
func (p *Pane) View(w, h int) string {
	// what a click or the wheel lands on is only what this frame draws: a
	// frame without the list (the viewer, no room left) maps no rows
	p.results.list.Map.Reset(0, 0, 0)
	p.preview.area = area{}
	if w <= 0 || h <= 0 {
		return ""
	}
	if p.viewing() {
		return panes.Block(p.viewer.lines(w, h, p.results.scopedText, p.styles), w, h)
	}
	top := p.composer.lines(w, h, composerLook{s: p.styles, focused: p.focus == focusComposer,
		rg: p.backendKnown && p.backend.Name == "rg"})
	if len(top) > h-1 {
		top = top[:max(h-1, 0)]
	}
	status := p.statusLine(w)
	areaH := h - len(top) - 1
	p.results.listTop = len(top)
	lines := top
	if areaH > 0 {
		lines = append(lines, strings.Split(p.area(w, areaH), "\n")...)
	}
	if h > len(lines) {
		lines = append(lines, status)
	}
	return panes.Block(lines, w, h)
}

// area is the results list, or the list and the preview.
func (p *Pane) area(w, h int) string {
	if p.results.showErrs {
		return panes.Block(p.results.errorLines(w, h, p.styles), w, h)
	}
	if !p.preview.open {
		return p.listBlock(w, h)
	}
	if w >= 100 {
		lw := w * 55 / 100
		pw := w - lw - 1
		p.preview.area = area{x: lw + 1, y: p.results.listTop, w: pw, h: h}
		left := strings.Split(p.listBlock(lw, h), "\n")
		right := strings.Split(p.previewBlock(pw, h), "\n")
		sep := p.styles.Subtle.Render("│")
		out := make([]string, h)
		for i := range out {
			out[i] = left[i] + sep + right[i]
		}
		return strings.Join(out, "\n")
	}
	lh := max(h/2, 1)
	ph := h - lh
	if ph <= 0 {
		p.preview.area = area{}
		return p.listBlock(w, h)
	}
	p.preview.area = area{x: 0, y: p.results.listTop + lh, w: w, h: ph}
	return p.listBlock(w, lh) + "\n" + p.previewBlock(w, ph)
}

func (p *Pane) statusLine(w int) string {
	s := p.styles
	sep := s.Subtle.Render(" · ")
	var parts []string
	if p.notice != "" {
		return panes.Fit(s.Warning.Render(safetext.Line(p.notice)), w)
	}
	be := "detecting backend…"
	if p.backendKnown {
		be = strings.TrimSpace(p.backend.Name + " " + p.backend.Version)
		if be == "" {
			be = "no backend"
		}
	}
	if p.composer.isScoped() {
		sc := p.composer.scope()
		if p.results.scoped != nil {
			parts = append(parts, s.Text.Render(fmt.Sprintf("%d of %d hits", len(p.results.scoped.Hits), p.results.scoped.Count)))
			if p.results.scoped.Truncated {
				parts = append(parts, s.Warning.Render("+ more, raise max results"))
			}
		}
		parts = append(parts, s.Muted.Render("scope "+sc.Name+" ("+sc.Kind+")"))
		if p.running || p.seq != 0 {
			parts = append(parts, s.Muted.Render("searching…"))
		} else if p.results.scoped != nil {
			parts = append(parts, s.Muted.Render(fmtElapsed(p.results.elapsed)))
		}
		return panes.Fit(strings.Join(parts, sep), w)
	}
	// stale: the results on screen answer an older pattern while a new
	// search waits for its debounce or for its first batch
	stale := p.seq != 0 || (p.running && p.results.gen != p.gen)
	if stale {
		parts = append(parts, s.Warning.Render("searching…"))
		if p.scanning > 0 {
			parts = append(parts, s.Muted.Render(fmt.Sprintf("%d %s scanned", p.scanning, plural(int(p.scanning), "file", "files"))))
		}
	}
	if p.results.gen != 0 && (p.results.final != nil || len(p.results.res.rows) > 0 || p.running || p.results.stopped) {
		counts := fmt.Sprintf("%d %s in %d %s", p.results.res.matches, plural(p.results.res.matches, "match", "matches"),
			len(p.results.res.groups), plural(len(p.results.res.groups), "file", "files"))
		if stale {
			parts = append(parts, s.Muted.Render("previous: "+counts))
		} else {
			parts = append(parts, s.Text.Render(counts))
			parts = append(parts, s.Muted.Render(fmt.Sprintf("scanned %d", p.results.scanned)))
		}
	}
	switch {
	case stale: // the old elapsed time would read as the new search's
	case p.running:
		parts = append(parts, s.Muted.Render("searching…"))
	case p.results.stopped:
		parts = append(parts, s.Warning.Render("stopped"))
	case p.results.final != nil:
		parts = append(parts, s.Muted.Render(fmtElapsed(p.results.elapsed)))
	}
	parts = append(parts, s.Muted.Render(be))
	if p.results.final != nil && p.results.final.Truncated {
		parts = append(parts, s.Warning.Render("+ more, raise max results"))
	}
	if p.results.final != nil && p.results.final.TimedOut {
		parts = append(parts, s.Warning.Render("timed out"))
	}
	if len(p.results.fileErrs) > 0 {
		parts = append(parts, s.Err.Render(fmt.Sprintf("%d file %s (e)", len(p.results.fileErrs), plural(len(p.results.fileErrs), "error", "errors"))))
	}
	if p.results.runErr != "" {
		parts = append(parts, s.Err.Render(safetext.Line(p.results.runErr)))
	}
	if p.results.final != nil && p.results.final.Stderr != "" {
		parts = append(parts, s.Err.Render(strings.Join(safetext.Lines(p.results.final.Stderr), " ")))
	}
	return panes.Fit(strings.Join(parts, sep), w)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func fmtElapsed(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// ShortHelp is the status bar's keys for the current mode, from its rows;
// while a search runs, ctrl+x (stop) comes first, so a narrow footer
// keeps it.
func (p *Pane) ShortHelp() []key.Binding {
	f := p.keymap().Footer()
	for i, b := range f {
		if i > 0 && b.Help().Key == "ctrl+x" {
			return append(append([]key.Binding{b}, f[:i]...), f[i+1:]...)
		}
	}
	return f
}

// FullHelp is the ? overlay's keys for the current mode, from its rows.
func (p *Pane) FullHelp() [][]key.Binding {
	switch {
	case p.viewer.loading:
		return [][]key.Binding{p.km.opening.Help()}
	case p.viewing():
		return [][]key.Binding{p.km.document.Help()}
	case p.focus == focusComposer:
		return [][]key.Binding{p.km.composer.Help(), p.km.anywhere.Help()}
	case p.results.showErrs:
		return [][]key.Binding{p.km.errors.Help(), p.km.anywhere.Help()}
	}
	return [][]key.Binding{p.km.results.Help(), p.km.anywhere.Help()}
}
