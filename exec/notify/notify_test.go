package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/internal/testwait"
)

func hostile() Event {
	return Event{Kind: Arrived, TaskID: "t-1", Agent: "agent:evil\x1b]0;pwned\a",
		Action: "MEDIA_PLAY", Device: "living-room\nrm -rf ~", ExpiresIn: 9*time.Minute + 400*time.Millisecond}
}

func TestExpandFillsMaskedDisplaySafeValues(t *testing.T) {
	e := hostile()
	e.Agent = "agent:x token=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
	got := Expand([]string{"notify-send", "Vigil", "{agent} asks to {action} on {device}", "{task_id} {expires_in} {nope}"}, e)
	if got[0] != "notify-send" || got[1] != "Vigil" {
		t.Fatalf("fixed args changed: %q", got)
	}
	if strings.Contains(got[2], "ghp_0123456789") {
		t.Errorf("secret reached the command: %q", got[2])
	}
	if strings.ContainsAny(got[2], "\n\x1b\a") {
		t.Errorf("control characters reached the command: %q", got[2])
	}
	if !strings.Contains(got[2], "asks to MEDIA_PLAY on living-room") {
		t.Errorf("got %q", got[2])
	}
	if got[3] != "t-1 9m0s {nope}" {
		t.Errorf("got %q", got[3])
	}
}

func TestExpandSubstitutesOnce(t *testing.T) {
	e := Event{Agent: "{device}", Device: "kitchen"}
	if got := Expand([]string{"{agent}/{device}"}, e)[0]; got != "{device}/kitchen" {
		t.Fatalf("got %q", got)
	}
}

func TestOSC9AndBell(t *testing.T) {
	e := hostile()
	out := Terminal(e)
	if !strings.HasPrefix(out, "\a\x1b]9;Vigil: ") || !strings.HasSuffix(out, "\x1b\\") {
		t.Fatalf("not bell + OSC 9: %q", out)
	}
	body := strings.TrimSuffix(strings.TrimPrefix(out, "\a\x1b]9;Vigil: "), "\x1b\\")
	if strings.ContainsAny(body, "\x1b\a\n\r\u009c") || strings.IndexByte(body, 0x9c) >= 0 {
		t.Fatalf("the text can end or extend the sequence: %q", body)
	}
	if !strings.Contains(body, "asks to MEDIA_PLAY on living-room") {
		t.Fatalf("body %q", body)
	}
	if got := OSC9("a\x1b\\b\x07c\u009cd"); got != "\x1b]9;Vigil: a\\bcd\x1b\\" {
		t.Fatalf("OSC9 kept a control: %q", got)
	}
	if got := OSC9(strings.Repeat("x", 2000)); len(got) > 512+len("\x1b]9;"+Prefix+"\x1b\\") {
		t.Fatalf("unbounded: %d bytes", len(got))
	}
}

func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "notify.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCommandReceivesMaskedValuesAsArgv(t *testing.T) {
	out := filepath.Join(t.TempDir(), "argv")
	sh := script(t, `for a in "$@"; do printf '%s\n' "$a"; done > "`+out+`"`)
	e := hostile()
	e.Device = "kitchen; touch /tmp/vigil-pwned $(id)"
	if err := (Command{Argv: []string{sh, "Vigil", "{agent} asks to {action} on {device}", "{task_id}"}}).Run(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	want := []string{"Vigil", Expand([]string{"{agent} asks to {action} on {device}"}, e)[0], "t-1"}
	if len(lines) != 3 || lines[0] != want[0] || lines[1] != want[1] || lines[2] != want[2] {
		t.Fatalf("argv %q, want %q", lines, want)
	}
	if strings.ContainsAny(lines[1], "\x1b\a") || !strings.Contains(lines[1], "$(id)") {
		t.Fatalf("argv[2] %q: want display-safe and passed literally (no shell)", lines[1])
	}
}

func TestCommandTimeoutKillsTheGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	// the script's child would outlive a kill of the script alone
	sh := script(t, "sleep 30 &\necho $! > "+pidFile+"\nwait\n")
	var logs bytes.Buffer
	c := Command{Argv: []string{sh}, Timeout: 300 * time.Millisecond, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	start := time.Now()
	err := c.Run(context.Background(), hostile())
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err %v, want ErrTimeout", err)
	}
	// the script sleeps 30 s: the bound tells a kill at the timeout from
	// waiting for the script, whatever the machine's load
	if took := time.Since(start); took > 15*time.Second {
		t.Fatalf("took %s", took)
	}
	if !strings.Contains(logs.String(), "notify command failed") {
		t.Fatalf("not logged: %s", logs.String())
	}
	b, _ := os.ReadFile(pidFile)
	pid := strings.TrimSpace(string(b))
	if pid != "" {
		testwait.For(t, 10*time.Second, func() error {
			if _, err := os.Stat("/proc/" + pid); err != nil {
				return nil
			}
			st, _ := os.ReadFile("/proc/" + pid + "/stat")
			if strings.Contains(string(st), ") Z ") {
				return nil // a zombie: killed, waiting for its reaper
			}
			return fmt.Errorf("the command's child %s survived the timeout", pid)
		})
	}
}

func TestCommandFailureIsReturnedAndLogged(t *testing.T) {
	var logs bytes.Buffer
	c := Command{Argv: []string{script(t, "echo boom >&2; exit 3")}, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	if err := c.Run(context.Background(), hostile()); err == nil {
		t.Fatal("want an error")
	}
	if !strings.Contains(logs.String(), "boom") {
		t.Fatalf("output not logged: %s", logs.String())
	}
	if err := (Command{Argv: []string{"/nonexistent/notify"}}).Run(context.Background(), hostile()); err == nil {
		t.Fatal("want an error for a missing command")
	}
	if err := (Command{}).Run(context.Background(), hostile()); err != nil {
		t.Fatalf("no command: %v", err)
	}
}

// A shell script reads an agent's text from the environment, where the
// shell never parses it: a lease sub like x$(touch PWNED) stays text. The
// same text through {agent} inside sh -c is what config refuses at load.
func TestShellScriptReadsValuesFromEnvironment(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("sh is required in CI: %v", err)
		}
		t.Skip("no sh")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	c := Command{Argv: []string{sh, "-c", `cd "$1" && printf '%s|%s|%s' "$VIGIL_AGENT" "$VIGIL_TASK_ID" "$VIGIL_EVENT" > out`, "sh", dir}}
	e := Event{Kind: Arrived, TaskID: "t-1", Agent: "x$(touch PWNED)`touch PWNED2`;touch PWNED3"}
	if err := c.Run(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "x$(touch PWNED)`touch PWNED2`;touch PWNED3|t-1|arrived" {
		t.Fatalf("the script got %q", b)
	}
	for _, n := range []string{"PWNED", "PWNED2", "PWNED3"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			t.Fatalf("%s: the agent's text ran", n)
		}
	}
	if _, err := config.Load(writeConfig(t, `[notify]
command = ["sh", "-c", "cd /tmp && notify-send '{agent}'"]
`), "/"); err == nil || !strings.Contains(err.Error(), "notify.command[2]") {
		t.Fatalf("config took a placeholder inside sh -c: %v", err)
	}
}

func TestPlaceholdersMatchConfig(t *testing.T) {
	if strings.Join(Placeholders, ",") != strings.Join(config.NotifyPlaceholders, ",") {
		t.Fatalf("notify fills %q, config checks %q", Placeholders, config.NotifyPlaceholders)
	}
}

func writeConfig(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// OSC 9 is also ConEmu's and Windows Terminal's introducer for other
// sub-commands (9;9 working directory, 9;4 progress): a sub starting "9;"
// or "4;" must not pick one. Every notification starts with the fixed
// prefix and ends with ST, so the bell is rung once.
func TestOSC9StartsWithFixedPrefix(t *testing.T) {
	for _, sub := range []string{"9;C:\\Windows", "4;3;50", "1;x"} {
		e := Event{Kind: Arrived, TaskID: "t", Agent: sub, Action: "MEDIA_PLAY", Device: "tv"}
		want := "\a\x1b]9;Vigil: " + sub + " asks to MEDIA_PLAY on tv\x1b\\"
		if got := Terminal(e); got != want {
			t.Errorf("sub %q: got %q, want %q", sub, got, want)
		}
	}
}

// A burst is told once: one bell, one notification with the counts; a
// burst of one is the event's own message.
func TestBurstCoalesces(t *testing.T) {
	var b Burst
	if b.Terminal() != "" {
		t.Fatal("an empty burst wrote something")
	}
	b.Add(Event{Kind: Arrived, Agent: "a", Action: "MEDIA_PLAY", Device: "tv"})
	if got := b.Terminal(); got != "\a\x1b]9;Vigil: a asks to MEDIA_PLAY on tv\x1b\\" {
		t.Fatalf("one: %q", got)
	}
	for i := 0; i < 29; i++ {
		b.Add(Event{Kind: Arrived, Agent: "4;3;50"})
	}
	if got := b.Terminal(); got != "\a\x1b]9;Vigil: 30 new tasks\x1b\\" {
		t.Fatalf("thirty: %q", got)
	}
	b.Add(Event{Kind: Expiring})
	b.Add(Event{Kind: Expiring})
	if got := b.Message(); got != "30 new tasks; 2 expire within a minute" {
		t.Fatalf("mixed: %q", got)
	}
	var soon Burst
	soon.Add(Event{Kind: Expiring})
	soon.Add(Event{Kind: Expiring})
	if got := soon.Message(); got != "2 tasks expire within a minute" {
		t.Fatalf("expiring: %q", got)
	}
}
