package panes

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Fit cuts or pads s to exactly width cells, ending a cut with an ellipsis.
func Fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	w := lipgloss.Width(s)
	if w > width {
		return ansi.Truncate(s, width, "…")
	}
	return s + strings.Repeat(" ", width-w)
}

// Truncate cuts s to width cells with an ellipsis, without padding.
func Truncate(s string, width int) string {
	if width <= 0 {
		return ""
	}
	return ansi.Truncate(s, width, "…")
}

// Block makes text exactly width×height: lines fitted, missing lines blank.
func Block(lines []string, width, height int) string {
	if height <= 0 {
		return ""
	}
	out := make([]string, height)
	for i := range out {
		if i < len(lines) {
			out[i] = Fit(lines[i], width)
		} else {
			out[i] = strings.Repeat(" ", max(width, 0))
		}
	}
	return strings.Join(out, "\n")
}

// Wrap breaks s into lines of at most width cells (hard-wrapping long words)
// so nothing is cut off without a way to see it.
func Wrap(s string, width int) []string {
	if width <= 0 {
		return nil
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		w := ansi.Wrap(para, width, " ")
		out = append(out, strings.Split(w, "\n")...)
	}
	return out
}

// Pad adds spaces to s up to width cells; a wider s is left whole.
func Pad(s string, width int) string {
	return s + strings.Repeat(" ", max(width-lipgloss.Width(s), 0))
}
