package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const kitchenRule = `[[rules]]
id = "kitchen-pause"
decision = "allow"
agents = ["claude-home"]
capabilities = ["MEDIA_PAUSE"]
devices = ["kitchen"]
media_hosts = ["*.example.com"]
when = "hour >= 7 && hour < 23"
expires = "2026-12-31T00:00:00Z"
[[rules.examples]]
task = { agent = "claude-home", capability = "MEDIA_PAUSE", device = "kitchen", hour = 9 }
want = "allow"
[[rules.examples]]
task = { agent = "claude-home", capability = "MEDIA_PAUSE", device = "kitchen", hour = 23, weekday = 6, warnings = ["x"], position_seconds = 1.5, media_uri = "https://a.example.com/x" }
want = "ask"
`

func TestRulesSectionLoads(t *testing.T) {
	cfg, err := Load(write(t, kitchenRule), "/")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Rules) != 1 {
		t.Fatalf("rules: %+v", cfg.Rules)
	}
	r := cfg.Rules[0]
	if r.ID != "kitchen-pause" || r.Decision != "allow" || r.Agents[0] != "claude-home" || r.Capabilities[0] != "MEDIA_PAUSE" ||
		r.Devices[0] != "kitchen" || r.MediaHosts[0] != "*.example.com" || r.When != "hour >= 7 && hour < 23" {
		t.Fatalf("rule: %+v", r)
	}
	exp, err := r.ExpiresAt()
	if err != nil || !exp.Equal(time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("expires: %v %v", exp, err)
	}
	if len(r.Examples) != 2 || *r.Examples[0].Task.Hour != 9 || r.Examples[0].Want != "allow" {
		t.Fatalf("examples: %+v", r.Examples)
	}
	ex := r.Examples[1].Task
	if *ex.Weekday != 6 || *ex.PositionSeconds != 1.5 || ex.Warnings[0] != "x" || ex.MediaURI != "https://a.example.com/x" {
		t.Fatalf("example task: %+v", ex)
	}
}

// TestRulesErrorsNameTheKeyAndRule: every refusal names the key as written
// (with its index), its line, and the rule broken.
func TestRulesErrorsNameTheKeyAndRule(t *testing.T) {
	rule := func(body string) string { return "[[rules]]\nid = \"r\"\ndecision = \"deny\"\n" + body }
	cases := []struct {
		name, body, key, want string
		line                  int
	}{
		{"bad decision", "[[rules]]\nid = \"a\"\ndecision = \"ask\"\n[[rules]]\nid = \"b\"\ndecision = \"deny\"\n[[rules]]\nid = \"c\"\ndecision = \"yes\"\n",
			"rules[2].decision", `must be allow, ask or deny, got "yes"`, 9},
		{"no decision", "[[rules]]\nid = \"a\"\n", "rules[0].decision", `must be allow, ask or deny, got ""`, 1},
		{"duplicate id", rule("") + rule(""), "rules[1].id", `duplicate rule id "r"`, 5},
		{"bad id", "[[rules]]\nid = \"Kitchen Pause\"\ndecision = \"ask\"\n", "rules[0].id", "must be 1 to 63", 2},
		{"allow without capabilities", "[[rules]]\nid = \"a\"\ndecision = \"allow\"\n", "rules[0].capabilities", "an allow rule must name what it allows", 1},
		{"bad glob", rule(`devices = ["kitchen", "[kit"]`), "rules[0].devices[1]", `is not a glob (path.Match syntax`, 4},
		{"bad glob late in pattern", rule(`agents = ["a*b\\"]`), "rules[0].agents[0]", `is not a glob`, 4},
		{"empty glob", rule(`capabilities = [""]`), "rules[0].capabilities[0]", "must not be empty", 4},
		{"upper-case host", rule(`media_hosts = ["Ads.Example.com"]`), "rules[0].media_hosts[0]", "must be lower-case", 4},
		{"unicode host", rule(`media_hosts = ["bücher.example"]`), "rules[0].media_hosts[0]", "punycode (xn--…)", 4},
		{"url as host", rule(`media_hosts = ["https://ads.example.com"]`), "rules[0].media_hosts[0]", "not a URL", 4},
		{"when does not compile", rule(`when = "hours >= 7"`), "rules[0].when", "CEL: 1:1: undeclared reference to 'hours'", 4},
		{"when is not bool", rule(`when = "hour + 1"`), "rules[0].when", "must be a true/false expression, got one of type int", 4},
		{"when syntax", rule(`when = "hour >="`), "rules[0].when", "CEL: 1:", 4},
		{"when too long", rule(`when = "` + strings.Repeat("true && ", 600) + `true"`), "rules[0].when", "longer than 4096 bytes", 4},
		{"bad expires", rule(`expires = "tomorrow"`), "rules[0].expires", `must be an RFC 3339 time such as "2026-12-31T00:00:00Z", got "tomorrow"`, 4},
		{"bad want", rule("[[rules.examples]]\ntask = { capability = \"MEDIA_STOP\" }\nwant = \"maybe\"\n"), "rules[0].examples[0].want", `must be allow, ask or deny, got "maybe"`, 6},
		{"bad hour", rule("[[rules.examples]]\ntask = { hour = 24 }\nwant = \"ask\"\n"), "rules[0].examples[0].task.hour", "must be 0 to 23, got 24", 5},
		{"bad weekday", rule("[[rules.examples]]\ntask = { weekday = 7 }\nwant = \"ask\"\n"), "rules[0].examples[0].task.weekday", "must be 0 to 6, got 7", 5},
		{"unknown example key", rule("[[rules.examples]]\ntask = { agnet = \"x\" }\nwant = \"ask\"\n"), "", "unknown key", 5},
		{"unknown rule key", rule(`capability = ["MEDIA_PLAY"]`), "rules[0].capability", "unknown key", 4},
		{"a table, not a list of tables", "[rules]\nid = \"a\"\ndecision = \"ask\"\n", "rules", "is a list of tables: write [[rules]], not [rules]", 1},
		{"expires as a TOML date", rule(`expires = 2026-12-31T00:00:00Z`), "rules[0].expires", "must be a string, got a date or time", 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(write(t, c.body), "/")
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("want a config error, got %v", err)
			}
			if (c.key != "" && ce.Key != c.key) || !strings.Contains(ce.Rule, c.want) || ce.Line != c.line {
				t.Fatalf("got %s (key %q line %d), want key %q line %d rule containing %q", err, ce.Key, ce.Line, c.key, c.line, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a config error is one line: %q", err)
			}
		})
	}
}

func TestCompileWhenTypes(t *testing.T) {
	for _, ok := range []string{
		"hour >= 7 && hour < 23",
		`agent == "claude-home" && capability.startsWith("MEDIA_")`,
		"has_position && position_seconds > 3600.0",
		"weekday == 0 || weekday == 6",
		`warnings.exists(w, w.contains("look-alike"))`,
		`media_host.endsWith(".example.com") && minute < 30 && device == "kitchen"`,
	} {
		if _, err := CompileWhen(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	if _, err := CompileWhen("position_seconds > 10"); err == nil || !strings.Contains(err.Error(), "CEL:") {
		t.Errorf("a double compared with an int literal is a CEL type error, got %v", err)
	}
}
