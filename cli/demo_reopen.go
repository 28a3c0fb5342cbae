package cli

import "github.com/vigil-dev/vigil/safetext"

// demoReopenLine is what `vigil demo` says once its TUI is closed: the
// home is kept, and the command that opens it again (the folder quoted
// for a shell when it needs it (shellQuote, cli/init.go), and shown
// display-safe).
func demoReopenLine(dir string) string {
	return "the demo home stays in " + safetext.Line(dir) + "; reopen it with: vigil --home " + safetext.Line(shellQuote(dir))
}
