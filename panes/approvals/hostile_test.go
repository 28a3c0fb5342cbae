package approvalspane

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"charm.land/lipgloss/v2"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/safetext"
)

// hostile are strings an agent controls that try to steer the terminal or
// mislead the reader.
var hostile = []struct{ name, s string }{
	{"CSI clear screen", "a\x1b[2J\x1b[Hb"},
	{"OSC 0 title", "a\x1b]0;pwned-title\x07b"},
	{"OSC 2 title", "a\x1b]2;pwned-title\x1b\\b"},
	{"OSC 8 link", "a\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\b"},
	{"OSC 52 clipboard", "a\x1b]52;c;cHduZWQ=\x07b"},
	{"DCS", "a\x1bP+q544e\x1b\\b"},
	{"C1 CSI", "a\u009b2Jb"},
	{"C1 raw byte", "a\x9b2Jb"},
	{"CR", "agent:good\rEVIL"},
	{"BS", "abc\b\b\bxyz"},
	{"NEL", "a\u0085b"},
	{"RLO", "a\u202egpj.exe"},
	{"zero width", "ag\u200bent"},
	{"look-alike host", "https://p\u0430ypal.com/a.mp3"},
}

// sgr is the styling this program writes itself.
var sgr = regexp.MustCompile("\x1b\\[[0-9;:]*m")

// rawControl finds anything in a rendered screen that a terminal would act
// on or that hides or reorders text: every escape but our own SGR styling,
// C0/C1 controls other than the line ends between rows, DEL, bidi
// controls, zero-width and other format characters, invalid UTF-8.
func rawControl(screen string) string {
	s := sgr.ReplaceAllString(screen, "")
	if !utf8.ValidString(s) {
		return "invalid UTF-8"
	}
	for _, r := range s {
		if r == '\n' {
			continue
		}
		if _, bad := safetext.Escape(r); bad && r != '\t' {
			return strings.TrimPrefix(jsonQuote(string(r)), "")
		}
	}
	return ""
}

func jsonQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// hostileManifest is a MEDIA_PLAY manifest whose agent (lease sub), jti or
// media_uri is attacker text.
func hostileManifest(env *approvaltest.Env, taskID, sub, jti, uri string) []byte {
	tok, err := lease.Issue(env.Issuer, lease.IssueOptions{Subject: sub, TaskID: taskID, Caps: []string{"MEDIA_PLAY"},
		TTL: 30 * time.Minute, Now: env.Clock.Now, JTI: jti})
	if err != nil {
		env.T.Fatal(err)
	}
	in, _ := json.Marshal(map[string]any{"media_uri": uri, "target_device": "living-room"})
	b, _ := json.Marshal(map[string]any{"task_id": taskID, "capability_id": "MEDIA_PLAY", "inputs": json.RawMessage(in), "lease": tok})
	return b
}

// Every agent-controlled field, with every hostile string, on the Approvals
// screen: escapes are visible as marks, no raw control reaches the
// terminal, hidden characters are counted, look-alike hosts are named.
// (task_id is validated at submit; the fields that still get through are
// the lease's sub and jti and the media_uri.)
func TestHostileStringsOnTheApprovalsScreen(t *testing.T) {
	fields := []string{"sub", "jti", "media_uri"}
	shown := 0
	for _, f := range fields {
		for _, h := range hostile {
			t.Run(f+"/"+h.name, func(t *testing.T) {
				env := approvaltest.New(t)
				sub, jti, uri := "agent:planner", "jti-1", "/media/a.mkv"
				switch f {
				case "sub":
					sub = h.s
				case "jti":
					jti = h.s
				case "media_uri":
					uri = h.s
					if !strings.Contains(h.s, "://") {
						uri = "https://media.example.com/" + h.s
					}
				}
				out := env.Submit(hostileManifest(env, "hostile", sub, jti, uri))
				if out.State != "pending" {
					t.Logf("refused at submit (%s): fine, it never reaches a screen", out.Error)
					return
				}
				shown++
				p := loadedPane(t, env)
				screen := p.View(200, 60)
				if c := rawControl(screen); c != "" {
					t.Fatalf("raw %s reached the screen:\n%s", c, screen)
				}
				plain := sgr.ReplaceAllString(screen, "")
				if safetext.Hidden(h.s) > 0 {
					if !strings.Contains(plain, "hidden character") {
						t.Errorf("no hidden-character note:\n%s", plain)
					}
					want := safetext.Line(h.s)
					if f == "media_uri" {
						want = safetext.Line(uri)
					}
					// the escaped form is on screen, somewhere, maybe wrapped
					flat := strings.Join(strings.Fields(plain), "")
					if !strings.Contains(flat, strings.Join(strings.Fields(want), "")) {
						t.Errorf("escaped %q not on screen:\n%s", want, plain)
					}
				}
				if h.name == "look-alike host" && f == "media_uri" {
					if !strings.Contains(plain, "look-alike host") || !strings.Contains(plain, "xn--") {
						t.Errorf("look-alike host not flagged:\n%s", plain)
					}
				}
				// the row, the decided list and the dialog too
				p.Update(keyMsg("v"))
				if c := rawControl(p.View(200, 60)); c != "" {
					t.Fatalf("decided list: raw %s", c)
				}
			})
		}
	}
	t.Logf("%d hostile submissions reached the screen", shown)
}

// Whatever the engine lets through today, the pane itself never lets a
// control reach the terminal: every shown field of a record, its preview,
// its result and the notices, crafted past the engine's checks (a record
// written by an older version, a device's or driver's answer), with every
// hostile string — in the queue, the preview, both dialogs and the decided
// list.
func TestHostileStringsInEveryShownField(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("base", "/media/a.mkv"))
	base := loadedPane(t, env)
	if base.queue.view == nil {
		t.Fatal("no preview")
	}
	fields := map[string]func(r *approval.Record, v *approval.View, res *task.Result, s string){
		"task_id": func(r *approval.Record, v *approval.View, _ *task.Result, s string) { r.TaskID, v.Record.TaskID = s, s },
		"agent":   func(r *approval.Record, v *approval.View, _ *task.Result, s string) { r.Agent, v.Record.Agent = s, s },
		"jti": func(r *approval.Record, v *approval.View, _ *task.Result, s string) {
			r.TokenJTI, v.Record.TokenJTI = s, s
		},
		"device": func(r *approval.Record, v *approval.View, _ *task.Result, s string) { r.Device, v.Record.Device = s, s },
		"caps":   func(r *approval.Record, v *approval.View, _ *task.Result, s string) { v.Record.Caps = []string{s} },
		"url": func(_ *approval.Record, v *approval.View, _ *task.Result, s string) {
			v.Preview.URL = "https://x.example/" + s
		},
		"header": func(_ *approval.Record, v *approval.View, _ *task.Result, s string) {
			v.Preview.Headers = map[string]string{s: s}
		},
		"body": func(_ *approval.Record, v *approval.View, _ *task.Result, s string) {
			v.Preview.Raw = "{\n" + s + "\n}"
		},
		"effect": func(_ *approval.Record, v *approval.View, _ *task.Result, s string) {
			v.Preview.EstimatedEffect = "Play " + s
		},
		"lease_err": func(_ *approval.Record, v *approval.View, _ *task.Result, s string) {
			v.LeaseValid, v.LeaseError = false, s
		},
		"source": func(r *approval.Record, v *approval.View, _ *task.Result, s string) { v.Record.Source = s },
		"decided_by": func(r *approval.Record, _ *approval.View, _ *task.Result, s string) {
			r.DecidedBy, r.DecidedVia = s, s
		},
		"reason": func(r *approval.Record, _ *approval.View, _ *task.Result, s string) { r.Reason = s },
		"damage": func(r *approval.Record, _ *approval.View, _ *task.Result, s string) { r.Damage = s },
		"error": func(r *approval.Record, _ *approval.View, res *task.Result, s string) {
			r.Error = &task.Error{Code: task.ExecutionFailed, Message: s}
			res.Error = &task.Error{Code: task.ExecutionFailed, Message: s}
		},
		"output": func(_ *approval.Record, _ *approval.View, res *task.Result, s string) {
			b, _ := json.Marshal(map[string]string{"x": s})
			res.Output = b
		},
	}
	for name, set := range fields {
		for _, h := range hostile {
			rec, v := base.queue.list[0], *base.queue.view
			res := &task.Result{TaskID: rec.TaskID, Status: task.StatusFailure, ExecutedAt: "2026-11-22T10:00:00Z",
				Signature: &task.Signature{Alg: "Ed25519", KeyID: "k", Value: "x"}}
			set(&rec, &v, res, h.s)
			v.Record.TaskID = rec.TaskID
			p := newPane(env)
			p.Update(listMsg{list: []approval.Record{rec}, err: errors.New(h.s)})
			p.Update(viewMsg{id: rec.TaskID, view: v})
			p.Update(outcomeMsg{id: rec.TaskID, rec: rec, res: res, err: errors.New(h.s)})
			screens := map[string]string{"queue": p.View(160, 40), "queue at 60": p.View(60, 30)}
			p.dialogs.grace = grace{}
			p.Update(keyMsg("a"))
			screens["confirm"] = p.View(160, 40)
			p.dialogs.confirm = nil
			p.dialogs.grace = grace{}
			p.Update(keyMsg("d"))
			screens["deny"] = p.View(160, 40)
			p.dialogs.deny = nil
			dec := rec
			for _, st := range []approval.State{approval.Failed, approval.Damaged, approval.Denied} {
				dec.State = st
				p.Update(listMsg{list: []approval.Record{rec}, decided: []approval.Record{dec}, err: errors.New(h.s)})
				p.Update(resultMsg{id: rec.TaskID, res: res})
				p.decided.shown = true
				screens["decided "+string(st)] = p.View(160, 40)
				p.decided.shown = false
			}
			p.decided.shown = true
			screens["decided at 60"] = p.View(60, 30)
			p.decided.shown = false
			for where, screen := range screens {
				if c := rawControl(screen); c != "" {
					t.Fatalf("%s/%s (%s): raw %s on screen:\n%s", name, h.name, where, c, screen)
				}
				for _, line := range strings.Split(screen, "\n") {
					if lipgloss.Width(line) > 160 {
						t.Fatalf("%s/%s (%s): a line overflows: widths are measured after escaping", name, h.name, where)
					}
				}
			}
			// the escaped form is visible where the field is shown
			if safetext.Hidden(h.s) > 0 {
				plain := sgr.ReplaceAllString(screens["queue"], "")
				if name == "agent" || name == "jti" || name == "url" || name == "effect" || name == "body" {
					if !strings.Contains(plain, "hidden character") {
						t.Errorf("%s/%s: no hidden-character note:\n%s", name, h.name, plain)
					}
				}
			}
		}
	}
}

// Through the real program: a submission with every agent-controlled value
// the engine accepts set to a look-alike; the final screen warns of it and
// holds no raw control.
func TestHostileSubmissionThroughTheProgram(t *testing.T) {
	env := approvaltest.New(t)
	lookalike := "p\u0430ypal"
	out := env.Submit(hostileManifest(env, "look", "agent:"+lookalike, "jti-"+lookalike, "https://"+lookalike+".com/\u200ba.mp3"))
	if out.State != "pending" {
		t.Fatalf("a look-alike host and a zero-width character must pass submit (and be shown escaped): %v", out.Error)
	}
	s := start(t, env, 160, 50, "effect")
	final := s.final()
	flat := strings.Join(strings.Fields(final), " ")
	for _, want := range []string{"look-alike host", "xn--", "hidden character", `\u200b`} {
		if !strings.Contains(flat, want) {
			t.Errorf("screen lacks %q:\n%s", want, final)
		}
	}
	if c := rawControl(final); c != "" {
		t.Fatalf("raw %s", c)
	}
}

// An escape is never split across lines when a long value wraps: the
// person never reads `\u20` on one line and `2e` on the next.
func TestWrappedEscapesStayWhole(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("wrap", "/media/a.mkv"))
	base := loadedPane(t, env)
	v := *base.queue.view
	v.Preview.EstimatedEffect = "Play " + strings.Repeat("ab\u202ecd\u200b", 30)
	v.Record.Agent = strings.Repeat("x\u2066", 40)
	p := newPane(env)
	p.Update(listMsg{list: base.queue.list})
	p.Update(viewMsg{id: "wrap", view: v})
	escape := regexp.MustCompile(`\\u([0-9a-f]{4}|XXXX)`)
	for w := 8; w <= 90; w++ {
		for _, line := range strings.Split(sgr.ReplaceAllString(p.View(w, 200), ""), "\n") {
			rest := escape.ReplaceAllString(line, "")
			if strings.Contains(rest, `\`) {
				t.Fatalf("width %d: an escape split in %q", w, line)
			}
		}
	}
}
