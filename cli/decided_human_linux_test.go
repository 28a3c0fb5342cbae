//go:build linux

package cli

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"os/user"
	"regexp"
	"strings"
	"testing"
	"time"
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

// Over the shared queue too: an operator at a terminal reads the sentence,
// and result for the agent says what happened (the real binary, a real
// NATS server and executor).
func TestSharedQueueDecisionsOnATerminalAreSentences(t *testing.T) {
	r := newNatsRig(t)
	ex := r.startExecutor()
	defer ex.stop(t)
	r.submit("tty-ok", time.Hour)
	r.submit("tty-no", time.Hour)
	onTTY := func(home, user string, args ...string) (string, int) {
		t.Helper()
		master, tty := openPTY(t)
		c := r.cmd(home, user, args...)
		var errb bytes.Buffer
		c.Stdout, c.Stderr = tty, &errb
		err := c.Run()
		tty.Close()
		out, _ := io.ReadAll(master)
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if errb.Len() > 0 {
			t.Logf("stderr of %v: %s", args, errb.String())
		}
		return string(out), code
	}
	if out, code := onTTY(r.ops["alice"], "alice", "approve", "tty-ok", "--yes"); code != 0 ||
		out != "tty-ok approved by operator:alice and executed: SUCCESS (signed result saved)\n" {
		t.Fatalf("approve: exit %d %q", code, out)
	}
	if out, code := onTTY(r.ops["bob"], "bob", "deny", "tty-no", "--reason", "not now"); code != 0 ||
		out != "tty-no denied by operator:bob: not now (signed result saved)\n" {
		t.Fatalf("deny: exit %d %q", code, out)
	}
	if out, code := onTTY(r.agent, "agent", "result", "tty-ok"); code != 0 ||
		!strings.HasPrefix(out, "tty-ok approved by operator:alice and executed: SUCCESS (signed result saved)\ndecided ") {
		t.Fatalf("result: exit %d %q", code, out)
	}
}
