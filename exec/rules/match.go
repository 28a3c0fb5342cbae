package rules

import (
	"path"
	"strings"

	"github.com/vigil-dev/vigil/exec/media"
)

// knownCapabilities are the capabilities a rule can be about.
var knownCapabilities = media.Capabilities

// isGlob says whether p holds a glob metacharacter (else it is compared
// as written, and indexed).
func isGlob(p string) bool { return strings.ContainsAny(p, `*?[\`) }

// globMatch is path.Match without its error (config refused bad globs).
// `*` and `?` do not cross a '/', which none of the matched fields hold.
func globMatch(pattern, s string) bool {
	if !isGlob(pattern) {
		return pattern == s
	}
	ok, _ := path.Match(pattern, s)
	return ok
}

// anyMatch says whether pattern matches one of values.
func anyMatch(pattern string, values []string) bool {
	for _, v := range values {
		if globMatch(pattern, v) {
			return true
		}
	}
	return false
}

// glob is one pattern, with whether it needs path.Match worked out once.
type glob struct {
	pat  string
	meta bool
}

func (g glob) match(s string) bool {
	if !g.meta {
		return g.pat == s
	}
	ok, _ := path.Match(g.pat, s)
	return ok
}

// field is a match field's globs; empty matches anything.
type field []glob

func newField(pats []string) field {
	f := make(field, len(pats))
	for i, p := range pats {
		f[i] = glob{p, isGlob(p)}
	}
	return f
}

func (f field) matches(v string) bool {
	if len(f) == 0 {
		return true
	}
	for _, g := range f {
		if g.match(v) {
			return true
		}
	}
	return false
}

// hostMatches: a media_hosts glob matches the host's lookup form or any
// other spelling it is known by (its punycode, its UTS-46 mapping, the
// address a numeric host is), so a deny on ads.example.com also holds for
// ａｄｓ.example.com. A task without a media host matches only a rule
// without media_hosts.
func (hosts field) matchesHost(f *Facts) bool {
	if len(hosts) == 0 {
		return true
	}
	if f.MediaHost == "" {
		return false
	}
	for _, g := range hosts {
		if g.match(f.MediaHost) {
			return true
		}
		for _, h := range f.MediaHostForms {
			if g.match(h) {
				return true
			}
		}
	}
	return false
}

// matchers are a rule's match fields, ready to match.
type matchers struct{ agents, capabilities, devices, hosts field }

// structural says whether the rule's match fields select the task.
func (r *Rule) structural(f *Facts) bool {
	m := &r.m
	return m.capabilities.matches(f.Capability) && m.agents.matches(f.Agent) &&
		m.devices.matches(f.Device) && m.hosts.matchesHost(f)
}

// anyKey is the index's bucket for rules whose field is absent or a glob;
// no task field holds a NUL, so it names no capability or agent.
const anyKey = "\x00"

// index finds a task's candidate rules without reading the whole set: by
// capability, then agent, each either a literal the rule names or anyKey.
// A rule lands in every bucket it could match from, and a task reads at
// most four buckets, one per (capability, agent) pair of "its own value"
// and anyKey, so each rule is a candidate at most once.
type index map[string]map[string][]*Rule

func buildIndex(rules []*Rule) index {
	idx := index{}
	for _, r := range rules {
		for _, c := range indexKeys(r.Capabilities) {
			if idx[c] == nil {
				idx[c] = map[string][]*Rule{}
			}
			for _, a := range indexKeys(r.Agents) {
				idx[c][a] = append(idx[c][a], r)
			}
		}
	}
	return idx
}

// indexKeys are the buckets a field puts its rule in: each literal, or
// anyKey alone when the field is absent or holds a glob.
func indexKeys(globs []string) []string {
	if len(globs) == 0 {
		return []string{anyKey}
	}
	seen := map[string]bool{}
	var keys []string
	for _, g := range globs {
		if isGlob(g) {
			return []string{anyKey}
		}
		if !seen[g] {
			seen[g] = true
			keys = append(keys, g)
		}
	}
	return keys
}

// candidates calls fn for each rule that could match f.
func (idx index) candidates(f *Facts, fn func(*Rule)) {
	for _, c := range [2]string{f.Capability, anyKey} {
		byAgent := idx[c]
		if byAgent == nil {
			continue
		}
		for _, a := range [2]string{f.Agent, anyKey} {
			for _, r := range byAgent[a] {
				fn(r)
			}
			if f.Agent == anyKey {
				break
			}
		}
		if f.Capability == anyKey {
			break
		}
	}
}

// HostMatches says whether one of globs matches a media host as a rule's
// media_hosts do: the host's lookup form or any other spelling of it
// (HostOf's host and forms). A URI without a host ("") matches none.
// Grants (exec/mcpserver) match their media_hosts with it.
func HostMatches(globs []string, host string, forms []string) bool {
	if len(globs) == 0 {
		return false
	}
	return newField(globs).matchesHost(&Facts{MediaHost: host, MediaHostForms: forms})
}
