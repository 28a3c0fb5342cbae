// Package notify tells a person that an agent is waiting for them: a
// configured command run without a shell (desktop notifications from `vigil
// serve`) and the terminal's bell and OSC 9 sequence (for the TUI).
package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/vigil-dev/vigil/preview"
	"github.com/vigil-dev/vigil/safetext"
)

// Kinds of Event.
const (
	Arrived  = "arrived"  // a task is waiting for a decision
	Expiring = "expiring" // a task's deadline is near (ExpiringBefore)
	// Several is a burst told once (Burst.Event): Count tasks, Summary
	// says how many arrived and expire; the other fields are the first's.
	Several = "several"
)

// ExpiringBefore is how long before its deadline a task is announced as expiring.
const ExpiringBefore = time.Minute

// DefaultTimeout bounds a notify command's run.
const DefaultTimeout = 5 * time.Second

// maxField bounds one placeholder's value (a notification is a glance, and
// the full request is in the preview).
const maxField = 200

// Event is one reason to notify. Its strings come from the task's record
// (lease subject, capability, device): untrusted, so Fields masks them and
// makes them display-safe before anything shows them.
type Event struct {
	Kind      string
	TaskID    string
	Agent     string
	Action    string
	Device    string
	ExpiresIn time.Duration
	// SSH is the command that opens the task on the SSH gate
	// (config.SSHCommand: "ssh -p 2222 vigil@gate preview ID"), or "" when
	// no gate address is known. The serve loop builds it from the config
	// and the task's checked id, never from what an agent wrote.
	SSH string
	// Count is how many tasks the event tells of: 1 for one task (0 is
	// read as 1), more for a burst (Kind Several).
	Count int
	// Summary is a burst's counts ("5 new tasks; 2 expire within a
	// minute"); empty for one task.
	Summary string
}

// Fields are the placeholders' values: masked (preview.MaskString) and
// display-safe on one line (safetext.Line), bounded in length.
func (e Event) Fields() map[string]string {
	in := e.ExpiresIn.Round(time.Second)
	if in < 0 {
		in = 0
	}
	return map[string]string{
		"agent":      clean(e.Agent),
		"action":     clean(e.Action),
		"device":     clean(e.Device),
		"task_id":    clean(e.TaskID),
		"expires_in": in.String(),
		"event":      clean(e.Kind),
		// not masked: it is config and a checked id, and a masked command
		// would not run; made display-safe all the same
		"ssh":     safetext.Line(e.SSH),
		"count":   fmt.Sprint(max(e.Count, 1)),
		"message": Message(e),
	}
}

func clean(s string) string {
	s = safetext.Line(preview.MaskString(s))
	if len(s) > maxField {
		cut := maxField
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// Placeholders are the names Expand fills, each written {name}.
var Placeholders = []string{"agent", "action", "device", "task_id", "expires_in", "event", "ssh", "count", "message"}

// Expand fills the placeholders in each argument. Values are substituted
// once (a value holding "{agent}" stays as it is) and never split or
// re-parsed: the command runs without a shell.
func Expand(argv []string, e Event) []string {
	f := e.Fields()
	pairs := make([]string, 0, 2*len(Placeholders))
	for _, name := range Placeholders {
		pairs = append(pairs, "{"+name+"}", f[name])
	}
	r := strings.NewReplacer(pairs...)
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = r.Replace(a)
	}
	return out
}

// Env is the placeholders' values as environment variables, VIGIL_<NAME>
// (VIGIL_AGENT, VIGIL_TASK_ID, …, VIGIL_SSH): the safe way for a shell script to read
// them ("$VIGIL_AGENT" is never parsed as code, {agent} inside sh -c would
// be, which config refuses).
func Env(e Event) []string {
	f := e.Fields()
	env := make([]string, 0, len(Placeholders))
	for _, name := range Placeholders {
		env = append(env, "VIGIL_"+strings.ToUpper(name)+"="+f[name])
	}
	return env
}

// Message is the one-line text of a notification, for the terminal's OSC 9
// and for logs: display-safe.
func Message(e Event) string {
	if e.Kind == Several {
		return safetext.Line(e.Summary)
	}
	agent, action, device := clean(e.Agent), clean(e.Action), clean(e.Device)
	if e.Kind == Expiring {
		in := max(e.ExpiresIn.Round(time.Second), 0)
		return fmt.Sprintf("%s asks to %s on %s — expires in %s", agent, action, device, in)
	}
	return fmt.Sprintf("%s asks to %s on %s", agent, action, device)
}

// Bell is the terminal bell.
const Bell = "\a"

// Prefix starts the text of every OSC 9 notification. OSC 9 is also the
// introducer of other sub-commands (ConEmu and Windows Terminal read
// "9;9;path" as the working directory, "9;4;…" as progress): text starting
// with an agent's own words (a sub of "4;3") could pick one. A fixed
// prefix makes the sequence only ever a notification.
const Prefix = "Vigil: "

// OSC9 is the desktop-notification escape sequence (ESC ] 9 ; Prefix text
// ST) that iTerm2, kitty, WezTerm, Windows Terminal and others turn into a
// desktop notification. text should come from Message; anything that could
// end or extend the sequence (C0/C1 controls, DEL) is dropped all the same,
// and the text is bounded. It ends with ST, not BEL, so the only bell
// rung is the one asked for (Bell).
func OSC9(text string) string {
	var b strings.Builder
	b.WriteString("\x1b]9;" + Prefix)
	n := 0
	for _, r := range text {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError {
			continue
		}
		if n += utf8.RuneLen(r); n > 512 {
			break
		}
		b.WriteRune(r)
	}
	b.WriteString("\x1b\\")
	return b.String()
}

// Terminal is what the TUI writes for one event: the bell, then OSC 9.
func Terminal(e Event) string { return Bell + OSC9(Message(e)) }

// Burst gathers the events that come together (30 tasks submitted at
// once) so the person is told once: one bell and one notification saying
// "30 new tasks", not one each. The zero Burst is empty.
type Burst struct {
	arrived, expiring int
	first             Event    // the first event added, told as itself when it is the only one
	ids               []string // the tasks' ids, the first maxBurstIDs of them
}

// maxBurstIDs bounds the task ids a burst's event names.
const maxBurstIDs = 20

// Add counts e in the burst.
func (b *Burst) Add(e Event) {
	if b.Len() == 0 {
		b.first = e
	}
	if len(b.ids) < maxBurstIDs && !slices.Contains(b.ids, e.TaskID) {
		b.ids = append(b.ids, e.TaskID)
	}
	if e.Kind == Expiring {
		b.expiring++
	} else {
		b.arrived++
	}
}

// Len is how many events the burst holds.
func (b Burst) Len() int { return b.arrived + b.expiring }

// Message is the burst's one-line text: the event's own (Message) when it
// holds one, else the counts ("5 new tasks; 2 expire within a minute").
func (b Burst) Message() string {
	if b.Len() == 1 {
		return Message(b.first)
	}
	var parts []string
	switch {
	case b.arrived == 1:
		parts = append(parts, "1 new task")
	case b.arrived > 1:
		parts = append(parts, fmt.Sprintf("%d new tasks", b.arrived))
	}
	switch {
	case b.expiring == 1:
		parts = append(parts, "1 expires within a minute")
	case b.expiring > 1 && b.arrived == 0:
		parts = append(parts, fmt.Sprintf("%d tasks expire within a minute", b.expiring))
	case b.expiring > 1:
		parts = append(parts, fmt.Sprintf("%d expire within a minute", b.expiring))
	}
	return strings.Join(parts, "; ")
}

// Event is the burst as one event for the notify command: the event
// itself when it is the only one, else Kind Several with the count, the
// summary and TaskID the tasks' ids separated by spaces (the first
// maxBurstIDs, then "…"); agent, action and device are the first event's,
// and SSH is left for the caller (no one task to open).
func (b Burst) Event() Event {
	if b.Len() <= 1 {
		return b.first
	}
	e := b.first
	e.Kind, e.Count, e.Summary, e.SSH = Several, b.Len(), b.Message(), ""
	e.TaskID = strings.Join(b.ids, " ")
	if b.Len() > len(b.ids) {
		e.TaskID += " …"
	}
	return e
}

// Terminal is what the TUI writes for the burst: one bell, then one OSC 9;
// nothing for an empty burst.
func (b Burst) Terminal() string {
	if b.Len() == 0 {
		return ""
	}
	return Bell + OSC9(b.Message())
}

// Command runs the configured notify command. The zero Argv runs nothing.
type Command struct {
	Argv    []string
	Timeout time.Duration // DefaultTimeout when zero
	Log     *slog.Logger
}

// ErrTimeout means the command was killed after its timeout.
var ErrTimeout = errors.New("notify command timed out")

// Run runs the command for e, without a shell, in its own process group,
// with the values in its environment too (Env);
// past the timeout (or when ctx ends) the whole group is killed. The
// outcome is logged and returned; it never affects anything else.
func (c Command) Run(ctx context.Context, e Event) error {
	if len(c.Argv) == 0 {
		return nil
	}
	log := c.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	argv := Expand(c.Argv, e)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), Env(e)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// the group: a script's children go too
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	w := &limited{b: &out, n: 4096} // one writer for both: exec then writes from one goroutine
	cmd.Stdout, cmd.Stderr = w, w
	start := time.Now()
	err := cmd.Run()
	switch {
	case err != nil && ctx.Err() == context.DeadlineExceeded:
		err = fmt.Errorf("%w after %s: %s", ErrTimeout, timeout, argv[0])
	case err != nil:
		err = fmt.Errorf("notify command %s: %w", argv[0], err)
	}
	if err != nil {
		log.Warn("notify command failed", "event", e.Kind, "task_id", clean(e.TaskID), "err", err,
			"output", safetext.Line(out.String()))
		return err
	}
	log.Info("notified", "event", e.Kind, "task_id", clean(e.TaskID), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// limited keeps at most n bytes and swallows the rest, so a chatty command
// cannot grow memory.
type limited struct {
	b *bytes.Buffer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		if len(p) < room {
			room = len(p)
		}
		l.b.Write(p[:room])
	}
	return len(p), nil
}
