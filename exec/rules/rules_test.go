package rules

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	_ "time/tzdata"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/media"
	"github.com/vigil-dev/vigil/exec/task"
)

// at is a moment in UTC; tests compile with Location UTC so the clock
// variables read it as written.
func at(hour, minute int) time.Time { return time.Date(2026, 11, 25, hour, minute, 0, 0, time.UTC) } // a Wednesday

var utc = Options{Location: time.UTC}

func compile(t *testing.T, rules ...config.RuleConfig) *Set {
	t.Helper()
	defs := make([]Def, len(rules))
	for i, r := range rules {
		defs[i] = Def{RuleConfig: r, Source: SourceConfig}
	}
	s, err := Compile(defs, utc, at(12, 0))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func rule(id, decision string, set func(*config.RuleConfig)) config.RuleConfig {
	r := config.RuleConfig{ID: id, Decision: decision}
	if decision == "allow" {
		r.Capabilities = []string{"MEDIA_*"}
	}
	if set != nil {
		set(&r)
	}
	return r
}

func pause(agent, device string) Facts {
	return Facts{Agent: agent, Capability: "MEDIA_PAUSE", Device: device}
}

func play(agent, device, uri string) Facts {
	f := Facts{Agent: agent, Capability: "MEDIA_PLAY", Device: device}
	f.MediaHost, f.MediaHostForms = HostOf(uri)
	f.Warnings = URIWarnings(uri)
	return f
}

// TestMatchFieldsAndGlobs: each match field alone, literal and glob, each
// way; an absent field matches anything.
func TestMatchFieldsAndGlobs(t *testing.T) {
	cases := []struct {
		name string
		set  func(*config.RuleConfig)
		f    Facts
		want bool
	}{
		{"no fields match anything", nil, pause("x", "y"), true},
		{"agent literal", func(r *config.RuleConfig) { r.Agents = []string{"claude-home"} }, pause("claude-home", "k"), true},
		{"agent literal other", func(r *config.RuleConfig) { r.Agents = []string{"claude-home"} }, pause("claude-work", "k"), false},
		{"agent literal is not a prefix", func(r *config.RuleConfig) { r.Agents = []string{"claude"} }, pause("claude-home", "k"), false},
		{"agent literal is case-sensitive", func(r *config.RuleConfig) { r.Agents = []string{"claude-home"} }, pause("Claude-home", "k"), false},
		{"agent glob", func(r *config.RuleConfig) { r.Agents = []string{"claude-*"} }, pause("claude-home", "k"), true},
		{"agent glob other", func(r *config.RuleConfig) { r.Agents = []string{"claude-*"} }, pause("gemini", "k"), false},
		{"agent second of a list", func(r *config.RuleConfig) { r.Agents = []string{"a", "b?"} }, pause("bz", "k"), true},
		{"capability literal", func(r *config.RuleConfig) { r.Capabilities = []string{"MEDIA_PAUSE"} }, pause("a", "k"), true},
		{"capability literal other", func(r *config.RuleConfig) { r.Capabilities = []string{"MEDIA_STOP"} }, pause("a", "k"), false},
		{"capability glob", func(r *config.RuleConfig) { r.Capabilities = []string{"MEDIA_P*"} }, pause("a", "k"), true},
		{"capability class", func(r *config.RuleConfig) { r.Capabilities = []string{"MEDIA_[ST]*"} }, pause("a", "k"), false},
		{"device literal", func(r *config.RuleConfig) { r.Devices = []string{"kitchen"} }, pause("a", "kitchen"), true},
		{"device literal other", func(r *config.RuleConfig) { r.Devices = []string{"kitchen"} }, pause("a", "kitchen-2"), false},
		{"device glob", func(r *config.RuleConfig) { r.Devices = []string{"kitchen*"} }, pause("a", "kitchen-2"), true},
		{"host literal", func(r *config.RuleConfig) { r.MediaHosts = []string{"media.example.com"} }, play("a", "k", "https://media.example.com/a.mp3"), true},
		{"host other", func(r *config.RuleConfig) { r.MediaHosts = []string{"media.example.com"} }, play("a", "k", "https://media.example.org/a.mp3"), false},
		{"host glob", func(r *config.RuleConfig) { r.MediaHosts = []string{"*.example.com"} }, play("a", "k", "https://cdn.media.example.com/a"), true},
		{"host glob needs a label", func(r *config.RuleConfig) { r.MediaHosts = []string{"*.example.com"} }, play("a", "k", "https://example.com/a"), false},
		{"host glob is not a suffix match", func(r *config.RuleConfig) { r.MediaHosts = []string{"*.example.com"} }, play("a", "k", "https://evil-example.com/a"), false},
		{"host compared lower-case", func(r *config.RuleConfig) { r.MediaHosts = []string{"media.example.com"} }, play("a", "k", "https://MEDIA.Example.COM./a"), true},
		{"host with port and userinfo", func(r *config.RuleConfig) { r.MediaHosts = []string{"media.example.com"} }, play("a", "k", "https://u:p@media.example.com:8443/a"), true},
		{"host field needs a host", func(r *config.RuleConfig) { r.MediaHosts = []string{"*"} }, pause("a", "k"), false},
		{"file uri has no host", func(r *config.RuleConfig) { r.MediaHosts = []string{"*"} }, play("a", "k", "file:///music/a.mp3"), false},
		{"punycode host", func(r *config.RuleConfig) { r.MediaHosts = []string{"xn--bcher-kva.example"} }, play("a", "k", "https://bücher.example/a"), true},
		{"every field together", func(r *config.RuleConfig) {
			r.Agents, r.Capabilities, r.Devices, r.MediaHosts = []string{"a"}, []string{"MEDIA_PLAY"}, []string{"k"}, []string{"m.example"}
		}, play("a", "k", "http://m.example/x"), true},
		{"every field but one", func(r *config.RuleConfig) {
			r.Agents, r.Capabilities, r.Devices, r.MediaHosts = []string{"a"}, []string{"MEDIA_PLAY"}, []string{"k"}, []string{"m.example"}
		}, play("a", "living-room", "http://m.example/x"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := compile(t, rule("r", "deny", c.set))
			v := s.Decide(c.f, at(12, 0))
			if got := v.Decision == Deny; got != c.want {
				t.Fatalf("matched = %v, want %v (%+v)", got, c.want, v)
			}
			if c.want && (v.Rule == nil || v.Rule.ID != "r" || len(v.Matched) != 1) {
				t.Fatalf("verdict must name the rule once: %+v", v)
			}
		})
	}
}

// TestDenyHoldsForEverySpellingOfAHost: a deny on a host cannot be dodged
// by writing the host another way.
func TestDenyHoldsForEverySpellingOfAHost(t *testing.T) {
	s := compile(t, rule("no-ads", "deny", func(r *config.RuleConfig) { r.MediaHosts = []string{"ads.example.com", "127.0.0.1"} }))
	for _, uri := range []string{
		"https://ads.example.com/a", "https://ADS.example.com./a", "https://ａｄｓ.example.com/a", // fullwidth: UTS-46 maps it
		"http://2130706433/a", "http://0x7f.1/a", "http://127.0.0.1:8080/a",
	} {
		if v := s.Decide(play("a", "k", uri), at(12, 0)); v.Decision != Deny {
			t.Errorf("%s: %s (%s)", uri, v.Decision, v.Reason)
		}
	}
	if v := s.Decide(play("a", "k", "https://adsexample.com/a"), at(12, 0)); v.Decision != Ask {
		t.Errorf("another host must not match: %+v", v)
	}
}

// TestStrictestWins: deny > ask > allow whatever the order; the first of
// equally strict rules decides; no match asks.
func TestStrictestWins(t *testing.T) {
	allow := func(id string) config.RuleConfig { return rule(id, "allow", nil) }
	cases := []struct {
		name   string
		rules  []config.RuleConfig
		want   Decision
		ruleID string
	}{
		{"none", nil, Ask, ""},
		{"allow", []config.RuleConfig{allow("a")}, Allow, "a"},
		{"allow ask", []config.RuleConfig{allow("a"), rule("b", "ask", nil)}, Ask, "b"},
		{"ask allow", []config.RuleConfig{rule("b", "ask", nil), allow("a")}, Ask, "b"},
		{"allow deny ask", []config.RuleConfig{allow("a"), rule("d", "deny", nil), rule("b", "ask", nil)}, Deny, "d"},
		{"deny allow", []config.RuleConfig{rule("d", "deny", nil), allow("a")}, Deny, "d"},
		{"two allows: the first", []config.RuleConfig{allow("a1"), allow("a2")}, Allow, "a1"},
		{"two denies: the first", []config.RuleConfig{allow("a"), rule("d1", "deny", nil), rule("d2", "deny", nil)}, Deny, "d1"},
		{"deny that does not match", []config.RuleConfig{allow("a"), rule("d", "deny", func(r *config.RuleConfig) { r.Devices = []string{"other"} })}, Allow, "a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := compile(t, c.rules...).Decide(pause("a", "k"), at(12, 0))
			if v.Decision != c.want {
				t.Fatalf("decision %s, want %s: %+v", v.Decision, c.want, v)
			}
			if c.ruleID == "" && v.Rule != nil || c.ruleID != "" && (v.Rule == nil || v.Rule.ID != c.ruleID) {
				t.Fatalf("deciding rule %+v, want %q", v.Rule, c.ruleID)
			}
			if c.ruleID == "" && v.Reason != "no rule matches: the person decides" {
				t.Fatalf("reason %q", v.Reason)
			}
		})
	}
}

// TestWarningNeverAllowed: a preview warning turns a rule's allow into
// asking (no rule decided); a deny still denies.
func TestWarningNeverAllowed(t *testing.T) {
	allowPlay := rule("play-ok", "allow", func(r *config.RuleConfig) { r.Capabilities = []string{"MEDIA_PLAY"} })
	s := compile(t, allowPlay)
	if v := s.Decide(play("a", "k", "https://media.example.com/a"), at(12, 0)); v.Decision != Allow {
		t.Fatalf("a plain URL is allowed: %+v", v)
	}
	for _, uri := range []string{
		"https://раураl.com/a",          // look-alike (Cyrillic)
		"https://xn--80aa0cbo65f.com/a", // punycode that reads otherwise
		"http://2130706433/a",           // numeric host
		"https://media.example.com/a\u200b.mp3",
	} {
		f := play("a", "k", uri)
		if len(f.Warnings) == 0 {
			t.Fatalf("%q: the preview must warn", uri)
		}
		v := s.Decide(f, at(12, 0))
		if v.Decision != Ask || v.Rule != nil || !strings.Contains(v.Reason, `rule "play-ok" would allow it, but its preview warns`) ||
			len(v.Warnings) == 0 || len(v.Matched) != 1 {
			t.Fatalf("%q: %+v", uri, v)
		}
	}
	changed := pause("a", "k")
	changed.Warnings = []string{"the request changed since it was submitted"}
	if v := compile(t, rule("p", "allow", nil)).Decide(changed, at(12, 0)); v.Decision != Ask || !strings.Contains(v.Reason, "changed since") {
		t.Fatalf("a changed request: %+v", v)
	}
	deny := rule("no", "deny", func(r *config.RuleConfig) { r.Capabilities = []string{"MEDIA_PLAY"} })
	if v := compile(t, allowPlay, deny).Decide(play("a", "k", "http://2130706433/a"), at(12, 0)); v.Decision != Deny || v.Rule.ID != "no" {
		t.Fatalf("deny beats a warning: %+v", v)
	}
}

// TestWhenWithInjectedClock: hour, minute and weekday come from the moment
// given, in the set's time zone.
func TestWhenWithInjectedClock(t *testing.T) {
	r := rule("day", "allow", func(r *config.RuleConfig) { r.When = "hour >= 7 && hour < 23" })
	s := compile(t, r)
	for _, c := range []struct {
		h, m int
		want Decision
	}{{6, 59, Ask}, {7, 0, Allow}, {22, 59, Allow}, {23, 0, Ask}, {0, 0, Ask}} {
		if v := s.Decide(pause("a", "k"), at(c.h, c.m)); v.Decision != c.want {
			t.Errorf("%02d:%02d: %s, want %s", c.h, c.m, v.Decision, c.want)
		}
	}
	// The same instant read in another zone: 06:00 UTC is 07:00 in Berlin in November (CET).
	berlin, err := time.LoadLocation("Europe/Berlin") // time/tzdata is linked in: a machine without zoneinfo has it too
	if err != nil {
		t.Fatal(err)
	}
	sb, err := Compile([]Def{{RuleConfig: r}}, Options{Location: berlin}, at(12, 0))
	if err != nil {
		t.Fatal(err)
	}
	if v := sb.Decide(pause("a", "k"), at(6, 0)); v.Decision != Allow {
		t.Errorf("06:00 UTC is 07:00 in Berlin: %+v", v)
	}
	wk := compile(t, rule("weekend", "deny", func(r *config.RuleConfig) { r.When = "weekday == 0 || weekday == 6" }),
		rule("quarter", "ask", func(r *config.RuleConfig) { r.When = "minute < 15 && weekday == 3" }))
	if v := wk.Decide(pause("a", "k"), time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)); v.Decision != Deny { // a Sunday
		t.Errorf("Sunday: %+v", v)
	}
	if v := wk.Decide(pause("a", "k"), at(12, 14)); v.Decision != Ask || v.Rule == nil || v.Rule.ID != "quarter" {
		t.Errorf("Wednesday 12:14: %+v", v)
	}
	if v := wk.Decide(pause("a", "k"), at(12, 15)); v.Rule != nil {
		t.Errorf("Wednesday 12:15: %+v", v)
	}
}

// TestWhenSeesTheTask: every task variable reaches the expression.
func TestWhenSeesTheTask(t *testing.T) {
	s := compile(t, rule("r", "deny", func(r *config.RuleConfig) {
		r.When = `agent == "a" && capability == "MEDIA_PLAY" && device == "k" && media_host == "m.example" && !has_position && size(warnings) == 0`
	}))
	if v := s.Decide(play("a", "k", "https://m.example/x"), at(12, 0)); v.Decision != Deny {
		t.Fatalf("%+v", v)
	}
	seek := compile(t, rule("long", "deny", func(r *config.RuleConfig) {
		r.Capabilities = []string{"MEDIA_SEEK"}
		r.When = "has_position && position_seconds > 3600.0"
	}))
	for pos, want := range map[float64]Decision{3601: Deny, 3600: Ask} {
		f := FactsOf(media.Action{Capability: "MEDIA_SEEK", Device: "k", Position: pos}, "a", nil)
		if v := seek.Decide(f, at(12, 0)); v.Decision != want {
			t.Errorf("seek to %v: %+v", pos, v)
		}
	}
}

// TestWhenThatFailsAsks: a `when` that cannot be evaluated (a variable this
// task lacks, the cost limit) counts as asking, never allowing, and says why.
func TestWhenThatFailsAsks(t *testing.T) {
	s := compile(t, rule("r", "allow", func(r *config.RuleConfig) { r.When = "position_seconds < 10.0" }))
	v := s.Decide(pause("a", "k"), at(12, 0))
	if v.Decision != Ask || v.Rule == nil || v.Rule.ID != "r" || v.Matched[0].Error == "" || !strings.Contains(v.Reason, "could not be evaluated") {
		t.Fatalf("%+v", v)
	}
	d := compile(t, rule("r", "deny", func(r *config.RuleConfig) { r.When = "position_seconds < 10.0" }))
	if v := d.Decide(pause("a", "k"), at(12, 0)); v.Decision != Deny {
		t.Fatalf("a failing deny stays a deny: %+v", v)
	}
	cheap, err := Compile([]Def{{RuleConfig: rule("r", "allow", func(r *config.RuleConfig) { r.When = "hour >= 7 && hour < 23 && minute >= 0" })}},
		Options{Location: time.UTC, CostLimit: 2}, at(12, 0))
	if err != nil {
		t.Fatal(err)
	}
	if v := cheap.Decide(pause("a", "k"), at(12, 0)); v.Decision != Ask || !strings.Contains(v.Matched[0].Error, "cost limit") {
		t.Fatalf("over the cost limit: %+v", v)
	}
}

// TestExpiredRuleNeverMatches: at and after expires the rule is gone.
func TestExpiredRuleNeverMatches(t *testing.T) {
	s := compile(t, rule("r", "allow", func(r *config.RuleConfig) { r.Expires = "2026-11-25T13:00:00Z" }))
	if v := s.Decide(pause("a", "k"), at(12, 59)); v.Decision != Allow {
		t.Fatalf("before: %+v", v)
	}
	for _, now := range []time.Time{at(13, 0), at(13, 1)} {
		if v := s.Decide(pause("a", "k"), now); v.Decision != Ask || len(v.Matched) != 0 {
			t.Fatalf("at/after %s: %+v", now, v)
		}
	}
	late, err := Compile([]Def{{RuleConfig: rule("r", "allow", func(r *config.RuleConfig) { r.Expires = "2026-11-25T13:00:00Z" })}}, utc, at(14, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(late.Warnings) != 1 || !strings.Contains(late.Warnings[0], "rules[0] (r): expired at 2026-11-25T13:00:00Z") {
		t.Fatalf("an expired rule is reported at load: %q", late.Warnings)
	}
}

// TestExamplesRunTheWholeSet: an example's want is checked against every
// rule, not just its own; a failing one is a warning, not an error.
func TestExamplesRunTheWholeSet(t *testing.T) {
	hour := func(h int) *int { return &h }
	kitchen := rule("kitchen-pause", "allow", func(r *config.RuleConfig) {
		r.Agents, r.Capabilities, r.Devices, r.When = []string{"claude-home"}, []string{"MEDIA_PAUSE"}, []string{"kitchen"}, "hour >= 7 && hour < 23"
		r.Examples = []config.RuleExample{
			{Task: config.ExampleTask{Agent: "claude-home", Capability: "MEDIA_PAUSE", Device: "kitchen", Hour: hour(9)}, Want: "allow"},
			{Task: config.ExampleTask{Agent: "claude-home", Capability: "MEDIA_PAUSE", Device: "kitchen", Hour: hour(23)}, Want: "ask"},
			{Task: config.ExampleTask{Agent: "claude-home", Capability: "MEDIA_PAUSE", Device: "kitchen"}, Want: "allow"}, // 12:00 by default
		}
	})
	s := compile(t, kitchen)
	if len(s.Warnings) != 0 {
		t.Fatalf("passing examples warn: %q", s.Warnings)
	}
	for _, r := range s.CheckExamples(at(2, 0)) {
		if !r.OK {
			t.Fatalf("examples do not depend on the time they run at: %s", r)
		}
	}
	ads := rule("no-ads", "deny", func(r *config.RuleConfig) {
		r.MediaHosts = []string{"ads.example.com"}
		r.Examples = []config.RuleExample{
			{Task: config.ExampleTask{Capability: "MEDIA_PLAY", Device: "kitchen", MediaURI: "https://ADS.example.com/x"}, Want: "deny"},
			{Task: config.ExampleTask{Capability: "MEDIA_PAUSE", Device: "kitchen"}, Want: "allow"}, // fails: no rule allows it
		}
	})
	// kitchen's first example now also meets no-ads (it does not match), and
	// a pause deny added later breaks kitchen's own example.
	stop := rule("no-kitchen", "deny", func(r *config.RuleConfig) { r.Devices = []string{"kitchen"}; r.Capabilities = []string{"MEDIA_PAUSE"} })
	s = compile(t, kitchen, ads, stop)
	got := strings.Join(s.Warnings, "\n")
	for _, want := range []string{
		`rules[0].examples[0] (kitchen-pause): got deny, want allow: rule "no-kitchen" denies it (the strictest of 2 matching rules)`,
		`rules[0].examples[1] (kitchen-pause): got deny, want ask`,
		`rules[0].examples[2] (kitchen-pause): got deny, want allow`,
		`rules[1].examples[1] (no-ads): got deny, want allow: rule "no-kitchen" denies it`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "rules[1].examples[0]") {
		t.Errorf("passing examples reported:\n%s", got)
	}
	if len(s.Warnings) != 4 {
		t.Errorf("want 4 warnings, got %d:\n%s", len(s.Warnings), got)
	}
}

// TestContentHash: the hash changes with what a rule matches and says,
// not with its examples, and is the same for the same text.
func TestContentHash(t *testing.T) {
	base := rule("r", "allow", func(r *config.RuleConfig) { r.Devices = []string{"kitchen"} })
	h := compile(t, base).Rules()[0].Hash
	if !strings.HasPrefix(h, "sha256:") || len(h) != len("sha256:")+64 {
		t.Fatalf("hash %q", h)
	}
	if compile(t, base).Rules()[0].Hash != h {
		t.Fatal("not stable")
	}
	withEx := base
	withEx.Examples = []config.RuleExample{{Task: config.ExampleTask{Capability: "MEDIA_STOP"}, Want: "allow"}}
	if compile(t, withEx).Rules()[0].Hash != h {
		t.Fatal("examples changed the hash")
	}
	for name, change := range map[string]func(*config.RuleConfig){
		"decision": func(r *config.RuleConfig) { r.Decision = "ask" },
		"agents":   func(r *config.RuleConfig) { r.Agents = []string{"a"} },
		"caps":     func(r *config.RuleConfig) { r.Capabilities = []string{"MEDIA_PLAY"} },
		"devices":  func(r *config.RuleConfig) { r.Devices = []string{"kitchen", "den"} },
		"hosts":    func(r *config.RuleConfig) { r.MediaHosts = []string{"a.example"} },
		"when":     func(r *config.RuleConfig) { r.When = "true" },
		"expires":  func(r *config.RuleConfig) { r.Expires = "2030-01-01T00:00:00Z" },
		"id":       func(r *config.RuleConfig) { r.ID = "r2" },
	} {
		c := base
		change(&c)
		if compile(t, c).Rules()[0].Hash == h {
			t.Errorf("%s: hash unchanged", name)
		}
	}
}

// TestIndexFindsEachRuleOnce: literal and glob fields, several of each,
// put a rule in several buckets; a task still sees it once.
func TestIndexFindsEachRuleOnce(t *testing.T) {
	s := compile(t,
		rule("lit", "deny", func(r *config.RuleConfig) {
			r.Capabilities = []string{"MEDIA_PAUSE", "MEDIA_STOP"}
			r.Agents = []string{"a", "b"}
		}),
		rule("mixed", "deny", func(r *config.RuleConfig) {
			r.Capabilities = []string{"MEDIA_PAUSE", "MEDIA_*"}
			r.Agents = []string{"a", "?"}
		}),
		rule("any", "ask", nil),
		rule("other", "deny", func(r *config.RuleConfig) { r.Capabilities = []string{"MEDIA_PLAY"} }),
	)
	v := s.Decide(pause("a", "k"), at(12, 0))
	var ids []string
	for _, m := range v.Matched {
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, ",") != "lit,mixed,any" {
		t.Fatalf("matched %v", ids)
	}
	if v := s.Decide(pause("\x00", "k"), at(12, 0)); len(v.Matched) != 2 {
		t.Fatalf("an agent named like the index's any-bucket: %+v", v.Matched)
	}
}

// TestCompileRefusesWhatConfigRefuses: rules that did not come through
// config.Load (runtime rules) are checked by the same code.
func TestCompileRefusesWhatConfigRefuses(t *testing.T) {
	for _, c := range []struct {
		r    config.RuleConfig
		want string
	}{
		{rule("r", "yes", nil), `rules[0].decision: must be allow, ask or deny, got "yes"`},
		{rule("r", "deny", func(r *config.RuleConfig) { r.Devices = []string{"[x"} }), "rules[0].devices[0]: is not a glob"},
		{rule("r", "deny", func(r *config.RuleConfig) { r.When = "hour" }), "rules[0].when: must be a true/false expression"},
	} {
		if _, err := Compile([]Def{{RuleConfig: c.r}}, utc, at(12, 0)); err == nil || err.Error() != c.want && !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	if _, err := Compile([]Def{{RuleConfig: rule("r", "ask", nil)}, {RuleConfig: rule("r", "deny", nil)}}, utc, at(12, 0)); err == nil ||
		!strings.Contains(err.Error(), `rules[1].id: duplicate rule id "r"`) {
		t.Errorf("duplicate id: %v", err)
	}
}

// TestLintFindsRulesThatCannotMatch: a capability or device glob that
// matches nothing known is reported (the silent-non-match of other tools).
func TestLintFindsRulesThatCannotMatch(t *testing.T) {
	cfg := config.Default()
	cfg.Devices = []config.DeviceConfig{{ID: "kitchen", Driver: "sim"}}
	cfg.Rules = []config.RuleConfig{
		rule("typo", "deny", func(r *config.RuleConfig) {
			r.Capabilities = []string{"MEDIA_PAUS"}
			r.Devices = []string{"kichen", "kit*"}
		}),
	}
	s, err := FromConfig(cfg, utc, at(12, 0))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(s.Warnings, "\n")
	for _, want := range []string{
		`rules[0] (typo).capabilities[0]: "MEDIA_PAUS" matches no capability (MEDIA_PLAY, MEDIA_PAUSE, MEDIA_STOP, MEDIA_SEEK)`,
		`rules[0] (typo).devices[0]: "kichen" matches no configured device`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "kit*") {
		t.Errorf("a glob that matches a device is fine:\n%s", got)
	}
}

// TestFromManifest: a submitted manifest's facts, as the queue reads them.
func TestFromManifest(t *testing.T) {
	m := &task.Manifest{TaskID: "t1", CapabilityID: "MEDIA_PLAY", Inputs: json.RawMessage(`{"target_device":"kitchen","media_uri":"https://Ｍedia.example.com/a.mp3"}`)}
	f, err := FromManifest(m, AgentOf("agent:claude-home"), []string{"kitchen"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Agent != "claude-home" || f.Capability != "MEDIA_PLAY" || f.Device != "kitchen" || f.MediaHost != "media.example.com" || len(f.Warnings) == 0 {
		t.Fatalf("%+v", f)
	}
	m.Inputs = json.RawMessage(`{"target_device":"garage"}`)
	m.CapabilityID = "MEDIA_STOP"
	if _, err := FromManifest(m, "a", []string{"kitchen"}); err == nil || !strings.Contains(err.Error(), "target_device") {
		t.Fatalf("a device not allowlisted: %v", err)
	}
	if got := AgentOf("external-sub"); got != "external-sub" {
		t.Fatal(got)
	}
}

// TestWhenVariablesAllBound: the activation binds every documented
// variable (a variable declared but not bound would fail every rule
// that uses it).
func TestWhenVariablesAllBound(t *testing.T) {
	p := 1.0
	a := newActivation(&Facts{PositionSeconds: &p}, clock{})
	for _, v := range config.WhenVariables {
		if _, ok := a.ResolveName(v.Name); !ok {
			t.Errorf("%s is not bound", v.Name)
		}
	}
}

// TestDecideConcurrently: a set is shared by every submission; run with
// -race.
func TestDecideConcurrently(t *testing.T) {
	s := compile(t, rule("day", "allow", func(r *config.RuleConfig) { r.When = "hour >= 7 && hour < 23" }),
		rule("no", "deny", func(r *config.RuleConfig) { r.Devices = []string{"garage"}; r.When = "hour >= 7 && hour < 23" }))
	done := make(chan Decision, 8)
	for i := range 8 {
		go func() {
			dev := "kitchen"
			if i%2 == 1 {
				dev = "garage"
			}
			var d Decision
			for range 200 {
				d = s.Decide(pause("a", dev), at(12, 0)).Decision
			}
			done <- d
		}()
	}
	allow, deny := 0, 0
	for range 8 {
		switch <-done {
		case Allow:
			allow++
		case Deny:
			deny++
		}
	}
	if allow != 4 || deny != 4 {
		t.Fatalf("allow %d deny %d", allow, deny)
	}
}

func TestHostMatchesEverySpelling(t *testing.T) {
	for _, c := range []struct {
		globs []string
		uri   string
		want  bool
	}{
		{[]string{"media.example.com"}, "https://media.example.com/a.mp3", true},
		{[]string{"media.example.com"}, "https://MEDIA.Example.com./a.mp3", true},
		{[]string{"media.example.com"}, "https://ｍｅｄｉａ.example.com/a.mp3", true},
		{[]string{"*.example.com"}, "https://cdn.example.com/a.mp3", true},
		{[]string{"*.example.com"}, "https://example.com/a.mp3", false},
		{[]string{"media.example.com"}, "https://ads.example/a.mp3", false},
		{[]string{"*"}, "/home/ada/a.mp3", false},
		{nil, "https://media.example.com/a.mp3", false},
	} {
		host, forms := HostOf(c.uri)
		if got := HostMatches(c.globs, host, forms); got != c.want {
			t.Errorf("HostMatches(%v, %q) = %v, want %v", c.globs, c.uri, got, c.want)
		}
	}
}
