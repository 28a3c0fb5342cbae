//go:build linux

package cli

import (
	"bytes"
	"context"
	"io"
	"os/user"
	"regexp"
	"strings"
	"testing"
)

// On a terminal approve, deny and result say what happened in a sentence,
// with the decider's words; --json on a terminal is the JSON a pipe gets.
func TestDecisionsOnATerminalAreSentences(t *testing.T) {
	home := demoHome(t)
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	by := "operator:" + u.Username

	out, errs, code := runOnDemoTerminal(t, home, "approve", "demo-play-movie", "--yes")
	if want := "demo-play-movie approved by " + by + " and executed: SUCCESS (signed result saved)\n"; code != 0 || out != want {
		t.Fatalf("approve on a terminal: exit %d, stdout %q, stderr %q; want %q", code, out, errs, want)
	}
	out, errs, code = runOnDemoTerminal(t, home, "deny", "demo-seek-soon", "--reason", "not now")
	if want := "demo-seek-soon denied by " + by + ": not now (signed result saved)" + "\n"; code != 0 || out != want {
		t.Fatalf("deny on a terminal: exit %d, stdout %q, stderr %q; want %q", code, out, errs, want)
	}

	out, errs, code = runOnDemoTerminal(t, home, "result", "demo-play-movie")
	lines := strings.Split(out, "\n")
	if code != 0 || errs != "" || len(lines) < 4 || !strings.HasPrefix(lines[3], `output: {"task_id":"demo-play-movie"`) ||
		lines[0] != "demo-play-movie approved by "+by+" and executed: SUCCESS (signed result saved)" ||
		!regexp.MustCompile(`^decided \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d) via cli$`).MatchString(lines[1]) ||
		!regexp.MustCompile(`^executed \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`).MatchString(lines[2]) {
		t.Fatalf("result on a terminal: exit %d, stderr %q, stdout:\n%s", code, errs, out)
	}
	out, _, code = runOnDemoTerminal(t, home, "result", "demo-seek-soon")
	if want := "demo-seek-soon denied by " + by + ": not now (signed result saved)"; code != 1 || !strings.HasPrefix(out, want+"\n") {
		t.Fatalf("denied result on a terminal: exit %d, stdout %q", code, out)
	}

	// --json on a terminal: the bytes a pipe gets
	piped, _, _ := run(t, home, "result", "demo-play-movie")
	onTTY, _, code := runOnDemoTerminal(t, home, "result", "demo-play-movie", "--json")
	if code != 0 || onTTY != piped || !strings.HasPrefix(piped, "{") {
		t.Fatalf("result --json on a terminal differs from the pipe:\n%q\n%q", onTTY, piped)
	}
}

// runOnDemoTerminal is runOnTerminal on the demo's clock (a demo home's
// tasks were submitted at auditClock's time).
func runOnDemoTerminal(t *testing.T, home string, args ...string) (string, string, int) {
	t.Helper()
	master, tty := openPTY(t)
	var errb bytes.Buffer
	app := NewApp()
	app.Out, app.Err, app.Now = tty, &errb, auditClock()
	app.In = strings.NewReader("")
	app.Getenv = func(string) string { return "" }
	app.Cwd = home
	root := NewRootCmd(app)
	root.SetArgs(append([]string{"--home", home}, args...))
	err := root.ExecuteContext(context.Background())
	tty.Close()
	out, _ := io.ReadAll(master)
	return string(out), errb.String(), ExitCode(err)
}
