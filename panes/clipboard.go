package panes

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// Clipboard copies text for the person. OSC 52 (tea.SetClipboard) reaches
// the terminal's clipboard, even over SSH, but many terminals ignore it;
// where a clipboard tool is installed for the session's display (wl-copy on
// Wayland, xclip on X11, pbcopy on macOS) it is run too.
type Clipboard struct {
	// Getenv and LookPath find the display and the tool; nil means the
	// process's own (os.Getenv, exec.LookPath).
	Getenv   func(string) string
	LookPath func(string) (string, error)
	GOOS     string // "" means runtime.GOOS
}

// ClipboardMsg reports a clipboard tool's run: Tool is "" when none was
// found (OSC 52 alone was used).
type ClipboardMsg struct {
	Tool string
	Err  error
}

// tool is the command that copies its stdin here, if one is installed.
func (c Clipboard) tool() []string {
	getenv, look, goos := c.Getenv, c.LookPath, c.GOOS
	if getenv == nil {
		getenv = os.Getenv
	}
	if look == nil {
		look = exec.LookPath
	}
	if goos == "" {
		goos = runtime.GOOS
	}
	var cands [][]string
	if goos == "darwin" {
		cands = append(cands, []string{"pbcopy"})
	}
	if getenv("WAYLAND_DISPLAY") != "" {
		cands = append(cands, []string{"wl-copy"})
	}
	if getenv("DISPLAY") != "" {
		cands = append(cands, []string{"xclip", "-selection", "clipboard"})
	}
	for _, cmd := range cands {
		if path, err := look(cmd[0]); err == nil {
			return append([]string{path}, cmd[1:]...)
		}
	}
	return nil
}

// Copy copies s through OSC 52 and, off the UI goroutine, through the
// session's clipboard tool when one is present (at most 2 s: a tool that
// hangs without a display must not hold anything up).
func (c Clipboard) Copy(s string) tea.Cmd {
	osc := tea.SetClipboard(s)
	argv := c.tool()
	if argv == nil {
		return osc
	}
	return tea.Batch(osc, func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Stdin = strings.NewReader(s)
		return ClipboardMsg{Tool: argv[0], Err: cmd.Run()}
	})
}
