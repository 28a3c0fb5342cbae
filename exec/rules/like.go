package rules

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vigil-dev/vigil/exec/media"
)

// UntilRestart, as LikeTask's lifetime, binds the rule to the live run of
// vigil serve (AddRequest.UntilRestart).
const UntilRestart time.Duration = 0

// LikeLifetimes are the lifetimes the TUI's approve prompt offers for a
// rule "like this task": 15 min, 1 h, until Vigil restarts.
var LikeLifetimes = []time.Duration{15 * time.Minute, time.Hour, UntilRestart}

// LikeTask is the request for a rule deciding tasks like f as d for
// lifetime from now (UntilRestart: while this run of vigil serve lasts;
// Store.Add refuses it when none is running): the same agent, capability and device, and for
// MEDIA_PLAY the same media host, each matched literally (glob characters
// in a name are escaped). It refuses what such a rule could not say
// narrowly: a task without an agent, a play without a media host (a rule
// without media_hosts would cover every host), and an allow for a task
// whose preview warns (no rule allows such a task).
func LikeTask(f Facts, d Decision, lifetime time.Duration, now time.Time, reason string, by Actor) (AddRequest, error) {
	switch {
	case f.Agent == "":
		return AddRequest{}, errors.New("the task names no agent: a rule like it would match every agent")
	case f.Capability == "" || f.Device == "":
		return AddRequest{}, errors.New("the task names no capability or device")
	case f.Capability == media.CapPlay && f.MediaHost == "":
		return AddRequest{}, errors.New("the media has no host (a local file): a rule like it would allow playing from any host")
	case d == Allow && len(f.Warnings) > 0:
		return AddRequest{}, fmt.Errorf("the task's preview warns (%s): no rule allows such a task", strings.Join(f.Warnings, "; "))
	}
	r := AddRequest{Decision: d, Agents: []string{Literal(f.Agent)}, Capabilities: []string{Literal(f.Capability)},
		Devices: []string{Literal(f.Device)}, ExpiresAt: now.Add(lifetime), Reason: reason, Actor: by}
	if lifetime == UntilRestart {
		r.UntilRestart, r.ExpiresAt = true, now.Add(MaxRuntimeLifetime)
	}
	if f.Capability == media.CapPlay {
		r.MediaHosts = []string{Literal(f.MediaHost)}
	}
	return r, CheckRequest(r, now)
}

// Literal is a glob matching exactly s (path.Match's metacharacters
// escaped).
func Literal(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Describe says in one line what a request would add, for the person to
// read before it is made: "allow MEDIA_PAUSE by claude-home on kitchen,
// until 15:24 (15m)".
func Describe(r AddRequest, now time.Time) string {
	var b strings.Builder
	b.WriteString(string(r.Decision))
	list := func(label string, globs []string) {
		if len(globs) > 0 {
			b.WriteString(label + strings.Join(globs, ","))
		}
	}
	if len(r.Capabilities) == 0 {
		b.WriteString(" any capability")
	}
	list(" ", r.Capabilities)
	list(" by ", r.Agents)
	list(" on ", r.Devices)
	list(" from ", r.MediaHosts)
	if r.UntilRestart {
		b.WriteString(", until Vigil restarts")
		return b.String()
	}
	fmt.Fprintf(&b, ", until %s (%s)", r.ExpiresAt.Local().Format("Jan 2 15:04"), r.ExpiresAt.Sub(now).Round(time.Second))
	return b.String()
}
