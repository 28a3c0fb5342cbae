package rules

import (
	"fmt"
	"testing"

	"github.com/vigil-dev/vigil/config"
)

// benchRules is a home with many agents and devices: 1,000 rules, each
// with a `when`; one in ten names its agents by a glob (so the index
// cannot narrow it by agent) and one in twenty names no capability.
func benchRules(b *testing.B) *Set {
	caps := []string{"MEDIA_PLAY", "MEDIA_PAUSE", "MEDIA_STOP", "MEDIA_SEEK"}
	whens := []string{
		"hour >= 7 && hour < 23",
		"weekday >= 1 && weekday <= 5 && hour >= 9",
		`minute < 30 || device == "kitchen"`,
		`!warnings.exists(w, w.contains("look-alike"))`,
	}
	defs := make([]Def, 1000)
	for i := range defs {
		r := config.RuleConfig{
			ID: fmt.Sprintf("rule-%d", i), Decision: []string{"allow", "ask", "deny"}[i%3],
			Agents:       []string{fmt.Sprintf("agent-%d", i%50)},
			Capabilities: []string{caps[i%4]},
			Devices:      []string{fmt.Sprintf("device-%d", i%10), "kitchen"},
			When:         whens[i%len(whens)],
		}
		if i%10 == 0 {
			r.Agents = []string{fmt.Sprintf("agent-%d*", i%50)}
		}
		if i%20 == 1 && r.Decision != "allow" {
			r.Capabilities = nil
		}
		if r.Capabilities != nil && r.Capabilities[0] == "MEDIA_PLAY" {
			r.MediaHosts = []string{"*.example.com"}
		}
		defs[i] = Def{RuleConfig: r}
	}
	s, err := Compile(defs, utc, at(12, 0))
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkDecide1000Rules: one task against 1,000 rules with `when`
// expressions (issue 33: ≤ 50 µs per task).
func BenchmarkDecide1000Rules(b *testing.B) {
	s := benchRules(b)
	f := play("agent-8", "kitchen", "https://media.example.com/a.mp3")
	now := at(12, 0)
	if v := s.Decide(f, now); len(v.Matched) == 0 {
		b.Fatalf("the task should match some rules: %+v", v)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Decide(f, now)
	}
}

// BenchmarkDecide1000RulesUnindexed: the worst case, every rule a
// candidate (no capability or agent literal to index by) and evaluated.
func BenchmarkDecide1000RulesUnindexed(b *testing.B) {
	defs := make([]Def, 1000)
	for i := range defs {
		defs[i] = Def{RuleConfig: config.RuleConfig{
			ID: fmt.Sprintf("rule-%d", i), Decision: "deny", Agents: []string{"agent-*"},
			When: fmt.Sprintf("hour >= %d && hour < 23", i%24),
		}}
	}
	s, err := Compile(defs, utc, at(12, 0))
	if err != nil {
		b.Fatal(err)
	}
	f := pause("agent-7", "kitchen")
	now := at(12, 0)
	b.ReportAllocs()
	for b.Loop() {
		s.Decide(f, now)
	}
}

// BenchmarkCompile1000Rules: loading 1,000 rules with `when` expressions
// (config's check, programs, index, examples).
func BenchmarkCompile1000Rules(b *testing.B) {
	for b.Loop() {
		benchRules(b)
	}
}
