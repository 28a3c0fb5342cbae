package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/mpvtest"
	"github.com/vigil-dev/vigil/internal/testbin"
	"github.com/vigil-dev/vigil/internal/testwait"
	approvalspane "github.com/vigil-dev/vigil/panes/approvals"
)

// newUser is a person on a fresh HOME with vigil installed from the clone.
type newUser struct {
	t    *testing.T
	home string   // $HOME
	env  []string // HOME, PATH with the installed vigil first, TERM
}

// installVigil runs `go install .` from the clone, as the README says, into
// a fresh HOME's bin (the build cache stays the machine's: HOME is the
// user's, GOCACHE is not).
func installVigil(t *testing.T) *newUser {
	t.Helper()
	goTool := testbin.Tool(t, "go")
	home := t.TempDir()
	bin := filepath.Join(home, "go", "bin")
	cmd := exec.Command(goTool, "install", ".")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GOBIN="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install .: %v\n%s", err, out)
	}
	return &newUser{t: t, home: home, env: []string{"HOME=" + home, "PATH=" + bin + ":" + os.Getenv("PATH"),
		"TERM=xterm-256color", "LANG=C.UTF-8"}}
}

// run runs the installed vigil with extra environment, from $HOME.
func (u *newUser) run(extra []string, args ...string) (string, error) {
	u.t.Helper()
	cmd := exec.Command(filepath.Join(u.home, "go", "bin", "vigil"), args...)
	cmd.Dir, cmd.Env = u.home, append(append([]string{}, u.env...), extra...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// serveMCP starts `vigil serve --mcp 127.0.0.1:0` on home and returns its
// URL; it is stopped with SIGTERM at the end.
func (u *newUser) serveMCP(home string) string {
	u.t.Helper()
	cmd := exec.Command(filepath.Join(u.home, "go", "bin", "vigil"), "serve", "--mcp", "127.0.0.1:0")
	cmd.Dir, cmd.Env = u.home, append(append([]string{}, u.env...), "VIGIL_HOME="+home)
	out, err := cmd.StdoutPipe()
	if err != nil {
		u.t.Fatal(err)
	}
	errs := &lockedBuilder{}
	cmd.Stderr = errs
	if err := cmd.Start(); err != nil {
		u.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	u.t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	url := make(chan string, 1)
	go func() {
		for r := bufio.NewScanner(out); r.Scan(); {
			if s, ok := strings.CutPrefix(r.Text(), "vigil serve: mcp on "); ok {
				url <- s
			}
		}
	}()
	select {
	case s := <-url:
		return s
	case err := <-done:
		u.t.Fatalf("vigil serve exited: %v\n%s", err, errs.String())
	case <-time.After(30 * time.Second):
		u.t.Fatalf("vigil serve did not say where it listens\n%s", errs.String())
	}
	return ""
}

// agent runs the official TypeScript client (testdata/mcp-ts/newuser.mjs)
// with the agent's token file and decodes what it prints.
func (u *newUser) agent(node string, args ...string) (isError bool, result map[string]any) {
	u.t.Helper()
	cmd := exec.CommandContext(u.t.Context(), node, append([]string{"newuser.mjs"}, args...)...)
	cmd.Dir = tsClientDir
	var stderr lockedBuilder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		u.t.Fatalf("node newuser.mjs %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr.String())
	}
	var got struct {
		IsError bool           `json:"isError"`
		Result  map[string]any `json:"result"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		u.t.Fatalf("%v: %s", err, out)
	}
	return got.IsError, got.Result
}

// tuiScreen is `vigil` in a detached tmux window.
type tuiScreen struct {
	t    *testing.T
	tm   func(args ...string) (string, error)
	name string
}

func (u *newUser) openTUI(home string, w, h int) *tuiScreen {
	u.t.Helper()
	tmux := testbin.Tool(u.t, "tmux")
	sock := fmt.Sprintf("vigil-init-test-%d", os.Getpid())
	tm := func(args ...string) (string, error) {
		out, err := exec.Command(tmux, append([]string{"-L", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		return string(out), err
	}
	u.t.Cleanup(func() { tm("kill-server") })
	argv := append([]string{"new-session", "-d", "-s", "user", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "-c", u.home, "env"},
		append(append([]string{}, u.env...), "VIGIL_HOME="+home, filepath.Join(u.home, "go", "bin", "vigil"))...)
	if out, err := tm(argv...); err != nil {
		u.t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	return &tuiScreen{t: u.t, tm: tm, name: "user"}
}

func (c *tuiScreen) keys(keys ...string) {
	c.t.Helper()
	if out, err := c.tm(append([]string{"send-keys", "-t", c.name}, keys...)...); err != nil {
		c.t.Fatalf("send-keys: %v %s", err, out)
	}
}

func (c *tuiScreen) waitFor(what string, cond func(string) bool) string {
	c.t.Helper()
	var last string
	testwait.For(c.t, 20*time.Second, func() error {
		last, _ = c.tm("capture-pane", "-p", "-t", c.name)
		if !cond(last) {
			return fmt.Errorf("waiting for %s; screen:\n%s", what, last)
		}
		return nil
	})
	return last
}

// TestNewUserPath follows issue 35's path on a fresh HOME with real
// processes: install from the clone (go install .), vigil init (mpv is on
// PATH: an mpv device), mpv started with the line init printed, vigil serve
// --mcp, the official TypeScript MCP client acting with the token init made
// asks media_pause without a lease (the grant mints one; the task waits),
// the TUI in tmux approves it through its gate (a, the grace period, y),
// and the agent's get_task_result and `vigil result` show it done; mpv
// is paused.
func TestNewUserPath(t *testing.T) {
	testbin.FullRunOnly(t, "installs vigil and runs mpv, vigil serve, node and the TUI in tmux")
	node := needTSClient(t)
	testbin.Tool(t, "mpv")
	u := installVigil(t)
	h := filepath.Join(u.home, "vigil")

	out, err := u.run(nil, "init", "--dir", h, "--yes")
	if err != nil {
		t.Fatalf("vigil init: %v\n%s", err, out)
	}
	t.Logf("vigil init --dir %s --yes:\n%s", h, out)
	m := regexp.MustCompile(`mpv --idle --input-ipc-server=(\S+)`).FindStringSubmatch(out)
	tokenFile := filepath.Join(h, "agents", "my-agent.token")
	if m == nil || !strings.Contains(out, "$(cat "+tokenFile+")") {
		t.Fatalf("vigil init did not print the mpv line and the token file:\n%s", out)
	}
	mpvtest.Start(t, m[1])
	if out, err := u.run([]string{"VIGIL_HOME=" + h}, "doctor"); err != nil && !strings.Contains(out, "FAIL search") {
		t.Fatalf("vigil doctor: %v\n%s", err, out)
	}

	url := u.serveMCP(h)
	const id = "pause-from-my-agent"
	isErr, res := u.agent(node, "pause", url, tokenFile, id, "player")
	if isErr || res["state"] != "pending" {
		t.Fatalf("media_pause without a lease: isError %v %v", isErr, res)
	}
	if out, _ := u.run([]string{"VIGIL_HOME=" + h}, "pending"); !strings.Contains(out, id) || !strings.Contains(out, "agent:my-agent") {
		t.Fatalf("vigil pending does not list the agent's task:\n%s", out)
	}

	tui := u.openTUI(h, 120, 40)
	tui.waitFor("the TUI", func(s string) bool { return strings.Contains(s, "3 Approvals") })
	tui.keys("3")
	screen := tui.waitFor("the agent's task", func(s string) bool {
		return strings.Contains(s, id) && strings.Contains(s, "MEDIA_PAUSE") && strings.Contains(s, "agent:my-agent")
	})
	t.Logf("the Approvals pane:\n%s", screen)
	time.Sleep(approvalspane.GraceMax + 200*time.Millisecond) // a task just shown takes no a: the real grace period
	tui.keys("a")
	screen = tui.waitFor("the prompt", func(s string) bool { return strings.Contains(s, "y approve") })
	t.Logf("after a:\n%s", screen)
	time.Sleep(approvalspane.GraceQuiet + 200*time.Millisecond) // the prompt's own grace period
	tui.keys("y")
	screen = tui.waitFor("the outcome", func(s string) bool { return strings.Contains(s, id+" approved and executed") })
	t.Logf("the TUI after y:\n%s", screen)

	isErr, res = u.agent(node, "result", url, tokenFile, id)
	if isErr || res["status"] != "SUCCESS" {
		t.Fatalf("get_task_result: isError %v %v", isErr, res)
	}
	out, err = u.run([]string{"VIGIL_HOME=" + h}, "result", id, "--json")
	if err != nil || !strings.Contains(out, `"status": "SUCCESS"`) {
		t.Fatalf("vigil result: %v\n%s", err, out)
	}
	if p := mpvtest.Get(t, m[1], "pause"); p != true {
		t.Fatalf("mpv's pause is %v after the approved pause", p)
	}
	out, _ = u.run([]string{"VIGIL_HOME=" + h}, "audit", "show", "--task", id, "--json")
	for _, want := range []string{`"lease_issued"`, `"agent:my-agent"`, `"via":"tui"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the audit trail lacks %s:\n%s", want, out)
		}
	}
}
