package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/internal/testbin"
	"github.com/vigil-dev/vigil/internal/testwait"
	"github.com/vigil-dev/vigil/themes"
)

// operatorKeyHome is a CLI home whose [decisions] require_operator_key is
// set, its SSH gate advertised.
func operatorKeyHome(t *testing.T) *crashHome {
	t.Helper()
	h := newCLIHome(t)
	f, err := os.OpenFile(filepath.Join(h.home, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("\n[decisions]\nrequire_operator_key = true\n\n[ssh]\nadvertise = \"vigil@gate.example:2222\"\n"); err != nil {
		t.Fatal(err)
	}
	return h
}

// runAs runs the CLI in-process as runReal does, with app changed by set
// first (its stdin, who it decides as).
func runAs(t *testing.T, home string, set func(*App), args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	app := NewApp()
	app.Out, app.Err = &out, &errb
	app.In = strings.NewReader("")
	app.Getenv = func(string) string { return "" }
	app.Cwd = home
	set(app)
	root := NewRootCmd(app)
	root.SetArgs(append([]string{"--home", home}, args...))
	err := root.ExecuteContext(context.Background())
	var ee *ExitError
	if err != nil && !(errors.As(err, &ee) && ee.Quiet) {
		errb.WriteString("vigil: " + err.Error() + "\n")
	}
	return out.String(), errb.String(), ExitCode(err)
}

// decisionsIn is every approved or denied entry of the home's audit log,
// as "event task actor".
func decisionsIn(t *testing.T, home string) []string {
	t.Helper()
	var got []string
	if _, err := audit.Scan(filepath.Join(home, "audit.log"), 0, func(l audit.Line) bool {
		if e := l.Entry; e.Event == audit.EventApproved || e.Event == audit.EventDenied {
			got = append(got, e.Event+" "+e.TaskID+" "+e.Actor)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// On a home whose decisions need an operator's key, this account's
// approve and deny are refused before any prompt (exit 1), saying how
// decisions are made here in the pane's words; the task stays pending and
// the log holds no decision. An SSH operator's commands (an App with their
// Identity) decide, recorded with their key.
func TestRequireOperatorKeyRefusesThisAccount(t *testing.T) {
	h := operatorKeyHome(t)
	h.must(0, "submit", h.manifest("guarded", "1h"))
	h.must(0, "submit", h.manifest("by-operator", "1h"))
	hash := h.previewJSON("guarded")["preview_hash"].(string)
	master, tty := openPTY(t)
	// an answer waits on the terminal: a prompt shown would take it (and
	// say so) instead of hanging; a refusal before the prompt never reads it
	if _, err := master.WriteString("y\n"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		in   func(*App)
	}{
		{[]string{"approve", "guarded", "--yes"}, func(*App) {}},
		{[]string{"approve", "guarded", "--expect-preview", hash}, func(*App) {}},
		{[]string{"deny", "guarded", "--reason", "no"}, func(*App) {}},
		// on a terminal, where the y/N prompt would otherwise be shown
		{[]string{"approve", "guarded"}, func(a *App) { a.In = tty }},
	} {
		out, errs, code := runAs(t, h.home, c.in, c.args...)
		if code != ExitCheck {
			t.Errorf("vigil %s: exit %d, want %d\n%s%s", strings.Join(c.args, " "), code, ExitCheck, out, errs)
		}
		flat := strings.Join(strings.Fields(errs), " ")
		for _, want := range []string{"made by an operator over SSH (ssh -p 2222 vigil@gate.example)",
			"this account can read tasks but not decide"} {
			if !strings.Contains(flat, want) {
				t.Errorf("vigil %s does not say %q:\n%s", strings.Join(c.args, " "), want, errs)
			}
		}
		if strings.Contains(errs, "Approve guarded?") || strings.Contains(errs, "SIM sim://") {
			t.Errorf("vigil %s prompted before refusing:\n%s", strings.Join(c.args, " "), errs)
		}
	}
	if out := h.must(0, "pending", "--json"); !strings.Contains(out, `"guarded"`) {
		t.Fatalf("the task left the queue:\n%s", out)
	}
	if got := decisionsIn(t, h.home); len(got) != 0 {
		t.Fatalf("refused decisions reached the log: %q", got)
	}

	const key = "SHA256:2ZlqVq0i3cG2LpRk8YtQ8m3Yd0xJvS6f1qW3e5r7t9u"
	asAda := func(a *App) { a.Identity = &Identity{Name: "ada", Via: approval.ViaSSH, Key: key} }
	if out, errs, code := runAs(t, h.home, asAda, "approve", "by-operator", "--yes"); code != 0 || !strings.Contains(out, `"SUCCESS"`) {
		t.Fatalf("an SSH operator's approval: exit %d\n%s%s", code, out, errs)
	}
	if got := strings.Join(decisionsIn(t, h.home), ","); got != "approved by-operator operator:ada" {
		t.Fatalf("decisions logged: %s", got)
	}
	if a := h.must(0, "audit", "show", "--json", "--task", "by-operator"); !strings.Contains(a, key) || !strings.Contains(a, `"via":"ssh"`) {
		t.Fatalf("the approval is not recorded via ssh with the operator's key:\n%s", a)
	}
}

// The local TUI's Approvals pane on such a home is told: it shows how
// decisions are made here and offers no a or d; an SSH operator's TUI (an
// App with their Identity) is offered them.
func TestTUIPaneOnOperatorKeyHome(t *testing.T) {
	h := operatorKeyHome(t)
	pal, _ := themes.Palettes("dark")
	for _, operator := range []bool{false, true} {
		app := NewApp()
		app.HomeFlag = h.home
		app.Getenv = func(string) string { return "" }
		if operator {
			app.Identity = &Identity{Name: "ada", Via: approval.ViaSSH, Key: "SHA256:k"}
		}
		if err := app.Load(); err != nil {
			t.Fatal(err)
		}
		list, closeAll, _ := buildPanes(app, themes.New(pal))
		var view string
		var keys []string
		for _, p := range list {
			if p.ID() == "approvals" {
				view = strings.Join(strings.Fields(p.View(100, 20)), " ")
				for _, sec := range p.(interface{ FullHelp() [][]key.Binding }).FullHelp() {
					for _, b := range sec {
						keys = append(keys, b.Help().Key)
					}
				}
			}
		}
		closeAll()
		refused := strings.Contains(view, "this account can read tasks but not decide")
		offered := slices.Contains(keys, "a") && slices.Contains(keys, "d")
		if refused == operator || offered != operator {
			t.Errorf("operator %v: refusal shown %v, a and d offered %v (keys %q):\n%s", operator, refused, offered, keys, view)
		}
	}
}

// A real `vigil serve` on a home whose SSH gate is advertised runs the
// [notify] command with {ssh} filled and VIGIL_SSH set: the command that
// opens the arriving task on the gate.
func TestServeNotifiesWithTheSSHCommand(t *testing.T) {
	testbin.FullRunOnly(t, "runs a real vigil serve")
	h := newCrashHome(t, testbin.Vigil(t))
	notified := filepath.Join(t.TempDir(), "notified")
	script := filepath.Join(t.TempDir(), "notify.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s|%s\\n' \"$1\" \"$VIGIL_SSH\" >> "+notified+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(h.home, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("\n[ssh]\nadvertise = \"vigil@gate.example:2222\"\n\n[notify]\ncommand = [\"" + script + "\", \"{ssh}\"]\n")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	sc := h.startServe()
	h.must(0, "submit", h.manifest("ring-1", "30m"))
	const want = "ssh -p 2222 vigil@gate.example preview ring-1|ssh -p 2222 vigil@gate.example preview ring-1\n"
	testwait.Until(t, 20*time.Second, "the notify command", func() bool {
		b, _ := os.ReadFile(notified)
		return strings.Contains(string(b), want)
	})
	if code := sc.stop(t); code != 0 {
		t.Fatalf("serve exit %d\n%s", code, sc.stderr.String())
	}
}
