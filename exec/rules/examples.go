package rules

import (
	"fmt"
	"strings"
	"time"

	"github.com/vigil-dev/vigil/config"
)

// ExampleResult is one [[rules.examples]] run against the whole set.
type ExampleResult struct {
	Key     string   `json:"key"`     // rules[0].examples[1], as config.toml names it
	RuleID  string   `json:"rule_id"` // the rule the example is written under
	Example int      `json:"example"` // its index under that rule
	Want    Decision `json:"want"`
	Got     Decision `json:"got"`
	Reason  string   `json:"reason"` // the verdict's reason
	OK      bool     `json:"ok"`
}

// String is one line naming the example and, when it fails, got vs want.
func (e ExampleResult) String() string {
	if e.OK {
		return fmt.Sprintf("%s (%s): %s as wanted", e.Key, e.RuleID, e.Got)
	}
	return fmt.Sprintf("%s (%s): got %s, want %s: %s", e.Key, e.RuleID, e.Got, e.Want, e.Reason)
}

// CheckExamples runs every rule's examples against the whole set, in
// order. An example's clock is its hour, minute and weekday, each
// defaulting to ExampleHour, ExampleMinute and ExampleWeekday (so a check gives the same answer at any
// time of day); expiry is judged at now itself.
func (s *Set) CheckExamples(now time.Time) []ExampleResult {
	var out []ExampleResult
	for _, r := range s.rules {
		for j, ex := range r.examples {
			f := exampleFacts(ex.Task)
			v := s.decide(&f, now, exampleClock(ex.Task))
			res := ExampleResult{
				Key: fmt.Sprintf("%s.examples[%d]", r.key(), j), RuleID: r.ID, Example: j,
				Want: Decision(ex.Want), Got: v.Decision, Reason: v.Reason,
			}
			res.OK = res.Got == res.Want
			out = append(out, res)
		}
	}
	return out
}

// exampleFacts are an example task's facts; a media_uri gives the host
// and the warnings a submitted task's preview would.
func exampleFacts(t config.ExampleTask) Facts {
	f := Facts{
		Agent: t.Agent, Capability: t.Capability, Device: t.Device,
		MediaHost: strings.ToLower(t.MediaHost), PositionSeconds: t.PositionSeconds,
		Warnings: append([]string(nil), t.Warnings...),
	}
	if t.MediaURI != "" {
		f.MediaHost, f.MediaHostForms = HostOf(t.MediaURI)
		f.Warnings = append(f.Warnings, URIWarnings(t.MediaURI)...)
	}
	return f
}

// The clock of an example that leaves a field out: Wednesday, 12:00.
const (
	ExampleHour    = 12
	ExampleMinute  = 0
	ExampleWeekday = 3
)

func exampleClock(t config.ExampleTask) clock {
	c := clock{ExampleHour, ExampleMinute, ExampleWeekday}
	if t.Hour != nil {
		c.hour = int64(*t.Hour)
	}
	if t.Minute != nil {
		c.minute = int64(*t.Minute)
	}
	if t.Weekday != nil {
		c.weekday = int64(*t.Weekday)
	}
	return c
}
