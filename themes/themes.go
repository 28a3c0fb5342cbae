// Package themes turns a palette of semantic colours into the one Styles
// struct every pane draws with; panes never pick colours themselves.
package themes

import (
	"fmt"
	"image/color"

	"charm.land/lipgloss/v2"
)

// Palette is the set of semantic colour tokens a theme defines.
type Palette struct {
	Name      string
	Text      color.Color
	Muted     color.Color // secondary text, context lines
	Subtle    color.Color // borders, rules
	Primary   color.Color // focus, active tab
	Accent    color.Color // badges, headings
	Highlight color.Color // search match background
	OnAccent  color.Color // text drawn on Primary/Highlight backgrounds
	Selection color.Color // selected row background
	Success   color.Color
	Warning   color.Color
	Error     color.Color
	Masked    color.Color // values masked by the engine (secrets)
}

// Names lists the built-in themes.
var Names = []string{"dark", "light", "high-contrast"}

// Palettes returns the palette for a theme name.
func Palettes(name string) (Palette, error) {
	switch name {
	case "dark":
		return Palette{Name: "dark",
			Text: lipgloss.Color("#E4E4E7"), Muted: lipgloss.Color("#8A8A93"), Subtle: lipgloss.Color("#3F3F46"),
			Primary: lipgloss.Color("#7C9CFF"), Accent: lipgloss.Color("#C4A7FF"), Highlight: lipgloss.Color("#F5C04A"),
			OnAccent: lipgloss.Color("#111114"), Selection: lipgloss.Color("#2A2E3F"),
			Success: lipgloss.Color("#5FD38D"), Warning: lipgloss.Color("#F5A524"), Error: lipgloss.Color("#FF6B6B"),
			Masked: lipgloss.Color("#FF9ECF")}, nil
	case "light":
		return Palette{Name: "light",
			Text: lipgloss.Color("#1F2328"), Muted: lipgloss.Color("#656D76"), Subtle: lipgloss.Color("#D0D7DE"),
			Primary: lipgloss.Color("#0550AE"), Accent: lipgloss.Color("#8250DF"), Highlight: lipgloss.Color("#FFD33D"),
			OnAccent: lipgloss.Color("#FFFFFF"), Selection: lipgloss.Color("#DDF4FF"),
			Success: lipgloss.Color("#1A7F37"), Warning: lipgloss.Color("#9A6700"), Error: lipgloss.Color("#CF222E"),
			Masked: lipgloss.Color("#BF3989")}, nil
	case "high-contrast":
		return Palette{Name: "high-contrast",
			Text: lipgloss.Color("#FFFFFF"), Muted: lipgloss.Color("#D0D0D0"), Subtle: lipgloss.Color("#FFFFFF"),
			Primary: lipgloss.Color("#00FFFF"), Accent: lipgloss.Color("#FFFF00"), Highlight: lipgloss.Color("#FFFF00"),
			OnAccent: lipgloss.Color("#000000"), Selection: lipgloss.Color("#0000AA"),
			Success: lipgloss.Color("#00FF00"), Warning: lipgloss.Color("#FFAF00"), Error: lipgloss.Color("#FF0000"),
			Masked: lipgloss.Color("#FF00FF")}, nil
	}
	return Palette{}, fmt.Errorf("theme: must be one of dark, light, high-contrast, got %q", name)
}

// Styles is everything panes draw with, built once from a palette.
type Styles struct {
	Palette Palette

	Text, Muted, Subtle   lipgloss.Style
	Title, Heading, Label lipgloss.Style
	Tab, TabActive, Badge lipgloss.Style
	StatusBar, KeyHint    lipgloss.Style
	KeyName               lipgloss.Style
	Selected, Cursor      lipgloss.Style
	Match, MatchChar      lipgloss.Style
	Success, Warning, Err lipgloss.Style
	Masked                lipgloss.Style
	Border                lipgloss.Style
	Dialog                lipgloss.Style
	Input, InputFocused   lipgloss.Style
}

// New builds Styles from a palette.
func New(p Palette) *Styles {
	s := lipgloss.NewStyle
	return &Styles{
		Palette:      p,
		Text:         s().Foreground(p.Text),
		Muted:        s().Foreground(p.Muted),
		Subtle:       s().Foreground(p.Subtle),
		Title:        s().Foreground(p.Primary).Bold(true),
		Heading:      s().Foreground(p.Accent).Bold(true),
		Label:        s().Foreground(p.Muted),
		Tab:          s().Foreground(p.Muted).Padding(0, 1),
		TabActive:    s().Foreground(p.OnAccent).Background(p.Primary).Bold(true).Padding(0, 1),
		Badge:        s().Foreground(p.OnAccent).Background(p.Accent).Bold(true),
		StatusBar:    s().Foreground(p.Muted),
		KeyHint:      s().Foreground(p.Muted),
		KeyName:      s().Foreground(p.Primary).Bold(true),
		Selected:     s().Background(p.Selection).Bold(true),
		Cursor:       s().Foreground(p.Primary).Bold(true),
		Match:        s().Foreground(p.OnAccent).Background(p.Highlight).Bold(true),
		MatchChar:    s().Foreground(p.Highlight).Bold(true).Underline(true),
		Success:      s().Foreground(p.Success),
		Warning:      s().Foreground(p.Warning),
		Err:          s().Foreground(p.Error).Bold(true),
		Masked:       s().Foreground(p.Masked).Italic(true),
		Border:       s().Border(lipgloss.RoundedBorder()).BorderForeground(p.Subtle),
		Dialog:       s().Border(lipgloss.RoundedBorder()).BorderForeground(p.Warning).Padding(0, 1),
		Input:        s().Foreground(p.Text),
		InputFocused: s().Foreground(p.Text).Underline(false),
	}
}

// Resolve picks the theme for a config value: "auto" (or empty) follows the
// terminal's background when known, dark otherwise.
func Resolve(name string, darkBackground bool) *Styles {
	if name == "" || name == "auto" {
		name = "dark"
		if !darkBackground {
			name = "light"
		}
	}
	p, err := Palettes(name)
	if err != nil {
		p, _ = Palettes("dark")
	}
	return New(p)
}
