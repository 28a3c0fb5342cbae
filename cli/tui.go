package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/memory"
	"github.com/vigil-dev/vigil/exec/search"
	"github.com/vigil-dev/vigil/panes"
	approvalspane "github.com/vigil-dev/vigil/panes/approvals"
	auditpane "github.com/vigil-dev/vigil/panes/audit"
	memorypane "github.com/vigil-dev/vigil/panes/memory"
	searchpane "github.com/vigil-dev/vigil/panes/search"
	"github.com/vigil-dev/vigil/preview"
	"github.com/vigil-dev/vigil/themes"
	"github.com/vigil-dev/vigil/ui"
)

// errNoTerminal is what `vigil` says, exit 2, when it has no terminal to
// draw on: without this check bubbletea's raw "could not open TTY" surfaces.
var errNoTerminal = Failf(ExitBadInput, "the TUI needs a terminal; use the headless commands, e.g. vigil search --json PATTERN "+
	"or vigil pending --json (vigil --help lists them all)")

// needTerminal checks that the TUI can draw (stdout is a terminal) and read
// keys (stdin is one, or the controlling terminal /dev/tty can be opened, as
// bubbletea does when stdin is a pipe).
func needTerminal(app *App) error {
	out, ok := app.Out.(*os.File)
	if !ok || !term.IsTerminal(out.Fd()) {
		return errNoTerminal
	}
	if in, ok := app.In.(*os.File); ok && term.IsTerminal(in.Fd()) {
		return nil
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return errNoTerminal
	}
	return tty.Close()
}

// tuiFPS caps how often the screen is redrawn. Bubble Tea's default, 60,
// keeps a renderer ticker firing 60 times a second even when nothing
// changes: about half of the idle TUI's CPU with 1,000 pending tasks.
// Measured here (idle share of a core on the Approvals pane, 1,000 pending,
// 30 s, two interleaved rounds; echo = a key typed in tmux until the screen
// shows it, median of 12): 60 fps 1.77–2.33%, echo 25–40 ms; 30 fps
// 1.13–1.23%, 39–44 ms; 20 fps 0.97–1.07%, 32–83 ms (the 83 under a
// parallel test run; 32 quiet, within the probe's noise of 60 fps's 25).
// Two more 70 s runs at 20 fps: 1.04% and 0.96%. 20 fps draws a keystroke
// within 50 ms, under what a typist notices, for half the idle cost; 10 fps
// (0.85%) would wait up to 100 ms.
const tuiFPS = 20

// runTUI opens the screens on the current home.
func runTUI(ctx context.Context, app *App) error {
	if err := needTerminal(app); err != nil {
		return err
	}
	if err := app.EnsureState(); err != nil {
		return err
	}
	logFile, err := os.OpenFile(app.Paths.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return Fail(ExitExecution, err)
	}
	defer logFile.Close()
	// stdout belongs to the screen; logs go to a file, masked
	app.Log = slog.New(preview.NewMaskingHandler(slog.NewTextHandler(logFile, nil)))

	styles := themes.Resolve(app.Cfg.Theme, true)
	list, closeAll, _ := buildPanes(app, styles)
	defer closeAll()
	m := ui.New(ui.Options{Context: ctx, Panes: list, Theme: app.Cfg.Theme, MouseOff: !app.Cfg.UI.Mouse})
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithFPS(tuiFPS))
	// the person's window title comes back after Bubble Tea clears it
	_ = ui.SaveTitle(os.Stdout)
	_, err = p.Run()
	_ = ui.RestoreTitle(os.Stdout)
	if err != nil && ctx.Err() == nil {
		return Fail(ExitExecution, err)
	}
	return nil
}

// localApprovalsOptions are the Approvals pane's options over this home's own
// queue for app's decider: this account (refused, with the words saying how
// decisions are made, on a require_operator_key home) or, with
// app.Identity set, an operator signed in over SSH, who decides as
// operator:<name> via ssh with their key. vigil serve --ssh builds each
// session's pane from them.
func localApprovalsOptions(app *App, eng *Engine) approvalspane.Options {
	o := approvalsBase(app)
	o.Queue = eng.Queue
	o.Rules = newTUIRules(app, eng)
	o.DecisionsRefused = decisionsRefused(app, eng, app.decision(true, approval.ViaTUI))
	if eng.Signer != nil {
		o.ResultKey = eng.Signer.Public() // decided results are shown signed only when they verify
	}
	return o
}

// approvalsBase is what every Approvals pane of app shares, whatever queue
// it is over: who decides, through which surface, and the notifications.
func approvalsBase(app *App) approvalspane.Options {
	o := approvalspane.Options{Operator: app.Operator(), Now: app.Now, Bell: app.Cfg.Approvals.Bell, Notify: app.Cfg.Notify.Terminal}
	if app.Identity != nil { // an operator signed in over SSH decides as them, with their key
		o.Via, o.Key = app.Identity.Via, app.Identity.Key
	}
	return o
}

// waitForKeys, on a home without the operator's key (a new home before
// `vigil keys init`), has the Approvals pane say the command instead of
// the engine's error and open the queue by itself once the key exists.
func waitForKeys(app *App, opts *approvalspane.Options) {
	key := filepath.Join(app.Paths.Keys, lease.OperatorKeyFile)
	if _, err := os.Stat(key); !errors.Is(err, fs.ErrNotExist) {
		return
	}
	cmd := "vigil keys init"
	if app.HomeFlag != "" {
		cmd = "vigil --home " + shellQuote(app.HomeFlag) + " keys init"
	}
	noKeys := fmt.Errorf("this home has no keys yet: run `%s` in a shell "+
		"(or `vigil init` to make a new home with a device and an agent)", cmd)
	opts.QueueErr = noKeys
	opts.Reopen = func() (approvalspane.Options, error) {
		if _, err := os.Stat(key); err != nil {
			return approvalspane.Options{}, noKeys // a stat a second, until the keys are made
		}
		eng, err := app.Engine(context.Background())
		if err != nil {
			return approvalspane.Options{}, err
		}
		return localApprovalsOptions(app, eng), nil
	}
}

// buildPanes makes the screens in tab order and a function that releases them.
// With [queue] url the Approvals pane is over the shared queue and the Audit
// pane over this home's copy of the executor's log (tui_queue.go), and the
// shared queue is returned too (nil when its config cannot work): it is
// made without waiting for the server, which it keeps trying to reach.
func buildPanes(app *App, styles *themes.Styles) ([]panes.Pane, func(), *tuiQueue) {
	opts := approvalsBase(app)
	var ap interface {
		panes.Pane
		Close()
	}
	var shared *tuiQueue
	if app.Cfg.Queue.Enabled() {
		ap = newExecutorAudit(app, styles)
		q, err := openTUIQueue(context.Background(), app)
		if err == nil {
			if err = q.approvalsOptions(app, &opts); err != nil {
				q.Close() // the pane cannot use it: nothing keeps connecting
			} else {
				shared = q
			}
		}
		opts.QueueErr = err
	} else {
		pane := auditpane.New(app.Paths.Audit, styles)
		pane.SetOnBroken(func(r *audit.Report) { // a break seen on screen leaves a trace in vigil.log
			app.Log.Error("audit log broken: run vigil audit verify, then vigil audit seal --reason R to record the break",
				"log", app.Paths.Audit, "report", r.String())
		})
		ap = pane
		if eng, err := app.Engine(context.Background()); err != nil {
			opts.QueueErr = err
			waitForKeys(app, &opts)
		} else {
			opts = localApprovalsOptions(app, eng)
		}
	}
	if opts.QueueErr != nil {
		opts.Queue = nil
	}
	apr := approvalspane.New(opts, styles)
	searchOpts := searchOptions(app)
	// a deny list the engine cannot compile leaves completion on the pane's
	// conservative reading; the search itself reports the error
	denied, _ := search.DenyMatcher(searchOpts.Deny)
	sp := searchpane.New(searchpane.Options{
		Search:      searchOpts,
		Denied:      denied,
		Scopes:      app.Cfg.Scopes,
		HistoryPath: app.Paths.History,
		Debounce:    app.Cfg.UI.SearchDebounce.Duration,
		Now:         app.Now,
		Getenv:      app.Getenv,
	}, styles)
	mo := memorypane.Options{Now: app.Now}
	if st, err := openMemory(app); err != nil {
		// the pane still answers every search with the seed's Processing error
		mo.OpenErr = err
		mo.Tool = memory.NewTool(memory.Unavailable(err), app.Log)
	} else {
		mo.Store = st
		mo.Tool = memory.NewTool(st, app.Log)
	}
	mem := memorypane.New(mo, styles)
	return []panes.Pane{sp, mem, apr, ap}, func() {
		sp.Close()
		mem.Close()
		ap.Close()
		// the shared queue first: its reads under way end with it, so the
		// Approvals pane's Close does not wait out a refresh from a server
		// that is gone
		if shared != nil {
			shared.Close()
		}
		apr.Close()
		if mo.Store != nil {
			mo.Store.Close()
		}
	}, shared
}
