package config

import (
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"cel.dev/cel-go/cel"
)

// RuleConfig is one [[rules]] entry: a decision for the tasks its match
// fields and its `when` select. Each match field is a list of globs
// (path.Match syntax: `*` is any run of characters, `?` one character,
// `[…]` a class); an absent field matches anything. exec/rules compiles
// and evaluates them; this file checks what the file says.
type RuleConfig struct {
	ID           string        `toml:"id" json:"id"`
	Decision     string        `toml:"decision" json:"decision"` // allow | ask | deny
	Agents       []string      `toml:"agents,omitempty" json:"agents,omitempty"`
	Capabilities []string      `toml:"capabilities,omitempty" json:"capabilities,omitempty"`
	Devices      []string      `toml:"devices,omitempty" json:"devices,omitempty"`
	MediaHosts   []string      `toml:"media_hosts,omitempty" json:"media_hosts,omitempty"`
	When         string        `toml:"when,omitempty" json:"when,omitempty"`
	Expires      string        `toml:"expires,omitempty" json:"expires,omitempty"` // RFC 3339
	Examples     []RuleExample `toml:"examples,omitempty" json:"examples,omitempty"`
}

// RuleExample is one [[rules.examples]]: a task and the decision the whole
// rule set must reach for it (checked at load and by `vigil rules check`).
type RuleExample struct {
	Task ExampleTask `toml:"task" json:"task"`
	Want string      `toml:"want" json:"want"`
}

// ExampleTask is an example's task: the facts a rule sees. The clock fields
// (hour, minute, weekday) default to the moment the examples run; MediaURI,
// when given, sets media_host and the URL's warnings as a submitted task's
// preview would.
type ExampleTask struct {
	Agent           string   `toml:"agent" json:"agent,omitempty"`
	Capability      string   `toml:"capability" json:"capability,omitempty"`
	Device          string   `toml:"device" json:"device,omitempty"`
	MediaHost       string   `toml:"media_host" json:"media_host,omitempty"`
	MediaURI        string   `toml:"media_uri" json:"media_uri,omitempty"`
	PositionSeconds *float64 `toml:"position_seconds" json:"position_seconds,omitempty"`
	Hour            *int     `toml:"hour" json:"hour,omitempty"`
	Minute          *int     `toml:"minute" json:"minute,omitempty"`
	Weekday         *int     `toml:"weekday" json:"weekday,omitempty"`
	Warnings        []string `toml:"warnings" json:"warnings,omitempty"`
}

// The decisions a rule may make, from the least strict.
const (
	RuleAllow = "allow"
	RuleAsk   = "ask"
	RuleDeny  = "deny"
)

// MaxWhenBytes bounds a rule's `when` expression.
const MaxWhenBytes = 4096

// WhenVariable is one variable a `when` expression may use.
type WhenVariable struct {
	Name string
	Type *cel.Type
	Doc  string
}

// WhenVariables are the names a rule's `when` sees, with their CEL types.
// exec/rules binds each of them for every task; docs/rules.md lists them
// (a test holds both to this list).
var WhenVariables = []WhenVariable{
	{"agent", cel.StringType, "the agent's name: an [[agents]] name, or the subject of a lease issued elsewhere"},
	{"capability", cel.StringType, "the capability asked for: MEDIA_PLAY, MEDIA_PAUSE, MEDIA_STOP or MEDIA_SEEK"},
	{"device", cel.StringType, "the target device's id"},
	{"media_host", cel.StringType, `the host MEDIA_PLAY's media_uri would be fetched from, lower-case and in its ASCII (punycode) form; "" for other capabilities`},
	{"has_position", cel.BoolType, "whether the task carries a position (MEDIA_SEEK)"},
	{"position_seconds", cel.DoubleType, "MEDIA_SEEK's target position in seconds; only bound when has_position (reading it otherwise fails, and a failing when asks)"},
	{"hour", cel.IntType, "the hour (0–23) when the task is decided, in the machine's local time zone"},
	{"minute", cel.IntType, "the minute (0–59) when the task is decided, local time"},
	{"weekday", cel.IntType, "the day of the week when the task is decided, local time: 0 Sunday, 1 Monday … 6 Saturday"},
	{"warnings", cel.ListType(cel.StringType), "what the task's preview warns about (hidden characters, a look-alike or numeric host, a changed request…); a rule never allows a task that has any"},
}

var (
	whenEnvOnce sync.Once
	whenEnv     *cel.Env
	whenEnvErr  error
)

// WhenEnv is the CEL environment `when` expressions are checked in: the
// standard library and WhenVariables, nothing else.
func WhenEnv() (*cel.Env, error) {
	whenEnvOnce.Do(func() {
		opts := make([]cel.EnvOption, 0, len(WhenVariables))
		for _, v := range WhenVariables {
			opts = append(opts, cel.Variable(v.Name, v.Type))
		}
		whenEnv, whenEnvErr = cel.NewEnv(opts...)
	})
	return whenEnv, whenEnvErr
}

// CompileWhen parses and type-checks a `when` expression: it must use only
// WhenVariables and be a bool. The error is one line, CEL's messages with
// their line:column in the expression.
func CompileWhen(expr string) (*cel.Ast, error) {
	whenCache.Lock()
	c, ok := whenCache.m[expr]
	whenCache.Unlock()
	if ok {
		return c.ast, c.err
	}
	ast, err := compileWhen(expr)
	whenCache.Lock()
	if len(whenCache.m) >= maxWhenCache {
		clear(whenCache.m)
	}
	whenCache.m[expr] = compiledWhen{ast, err}
	whenCache.Unlock()
	return ast, err
}

// whenCache keeps each expression's compilation (a checked AST is
// immutable and shared): a config is checked on every command, and many
// rules share one `when`; compiling costs about 50 µs.
var whenCache = struct {
	sync.Mutex
	m map[string]compiledWhen
}{m: map[string]compiledWhen{}}

type compiledWhen struct {
	ast *cel.Ast
	err error
}

const maxWhenCache = 4096

func compileWhen(expr string) (*cel.Ast, error) {
	if len(expr) > MaxWhenBytes {
		return nil, fmt.Errorf("longer than %d bytes", MaxWhenBytes)
	}
	env, err := WhenEnv()
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(expr)
	if iss != nil && len(iss.Errors()) > 0 {
		var msgs []string
		for _, e := range iss.Errors() {
			msgs = append(msgs, fmt.Sprintf("%d:%d: %s", e.Location.Line(), e.Location.Column()+1, e.Message))
		}
		return nil, fmt.Errorf("CEL: %s", strings.Join(msgs, "; "))
	}
	if !ast.OutputType().IsExactType(cel.BoolType) {
		return nil, fmt.Errorf("must be a true/false expression, got one of type %s", ast.OutputType())
	}
	return ast, nil
}

// ExpiresAt is the rule's expiry; zero when it has none.
func (r RuleConfig) ExpiresAt() (time.Time, error) {
	if r.Expires == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, r.Expires)
	if err != nil {
		return time.Time{}, fmt.Errorf("must be an RFC 3339 time such as \"2026-12-31T00:00:00Z\", got %q", r.Expires)
	}
	return t, nil
}

// ValidDecision says whether d is allow, ask or deny.
func ValidDecision(d string) bool { return d == RuleAllow || d == RuleAsk || d == RuleDeny }

// validateRules checks [[rules]]: unique ids, a decision, globs that
// compile, a `when` that type-checks, an expiry that parses, and examples
// whose want is a decision. Whether the examples pass is exec/rules' to say
// (a failing example is a warning, not an error).
func validateRules(rules []RuleConfig) error {
	ids := map[string]bool{}
	for i, r := range rules {
		key := fmt.Sprintf("rules[%d]", i)
		switch {
		case !namePattern.MatchString(r.ID):
			return &Error{Key: key + ".id", Rule: fmt.Sprintf("must be 1 to 63 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit, got %q", r.ID)}
		case ids[r.ID]:
			return &Error{Key: key + ".id", Rule: fmt.Sprintf("duplicate rule id %q", r.ID)}
		case !ValidDecision(r.Decision):
			return &Error{Key: key + ".decision", Rule: fmt.Sprintf("must be allow, ask or deny, got %q", r.Decision)}
		case r.Decision == RuleAllow && len(r.Capabilities) == 0:
			return &Error{Key: key + ".capabilities", Rule: `an allow rule must name what it allows (a glob such as "MEDIA_*" is fine)`}
		}
		ids[r.ID] = true
		if err := validateRuleGlobs(key, r); err != nil {
			return err
		}
		if r.When != "" {
			if _, err := CompileWhen(r.When); err != nil {
				return &Error{Key: key + ".when", Rule: err.Error()}
			}
		}
		if _, err := r.ExpiresAt(); err != nil {
			return &Error{Key: key + ".expires", Rule: err.Error()}
		}
		for j, ex := range r.Examples {
			if err := validateExample(fmt.Sprintf("%s.examples[%d]", key, j), ex); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateRuleGlobs checks each match field's globs: non-empty, a pattern
// path.Match accepts, and media hosts written lower-case in ASCII (a
// non-ASCII host is written in punycode, as it is compared).
func validateRuleGlobs(key string, r RuleConfig) error {
	for _, f := range []struct {
		name  string
		globs []string
	}{{"agents", r.Agents}, {"capabilities", r.Capabilities}, {"devices", r.Devices}, {"media_hosts", r.MediaHosts}} {
		for k, g := range f.globs {
			at := fmt.Sprintf("%s.%s[%d]", key, f.name, k)
			if g == "" {
				return &Error{Key: at, Rule: "must not be empty (leave the field out to match anything)"}
			}
			if _, err := path.Match(g, ""); err != nil {
				return &Error{Key: at, Rule: fmt.Sprintf("is not a glob (path.Match syntax: *, ?, [a-z], \\ escapes), got %q", g)}
			}
			if f.name == "media_hosts" {
				if err := hostGlobRule(g); err != "" {
					return &Error{Key: at, Rule: err}
				}
			}
		}
	}
	return nil
}

// hostGlobRule says what is wrong with a media host glob; "" when fine.
func hostGlobRule(g string) string {
	for _, c := range g {
		if c >= 0x80 {
			return fmt.Sprintf("must be written in ASCII: write a non-ASCII host in its punycode (xn--…) form, got %q", g)
		}
	}
	if g != strings.ToLower(g) {
		return fmt.Sprintf("must be lower-case (hosts are compared lower-case), got %q", g)
	}
	if strings.ContainsAny(g, "/:@") {
		return fmt.Sprintf("must be a host name, not a URL or host:port, got %q", g)
	}
	return ""
}

// validateExample checks one example: its want and its clock fields.
func validateExample(key string, ex RuleExample) error {
	if !ValidDecision(ex.Want) {
		return &Error{Key: key + ".want", Rule: fmt.Sprintf("must be allow, ask or deny, got %q", ex.Want)}
	}
	for _, f := range []struct {
		name string
		v    *int
		max  int
	}{{"hour", ex.Task.Hour, 23}, {"minute", ex.Task.Minute, 59}, {"weekday", ex.Task.Weekday, 6}} {
		if f.v != nil && (*f.v < 0 || *f.v > f.max) {
			return &Error{Key: key + ".task." + f.name, Rule: fmt.Sprintf("must be 0 to %d, got %d", f.max, *f.v)}
		}
	}
	return nil
}
