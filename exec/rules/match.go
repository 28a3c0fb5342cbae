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

// fieldMatches: an empty list matches anything; else one glob must match.
func fieldMatches(globs []string, v string) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		if globMatch(g, v) {
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
func hostMatches(globs []string, f *Facts) bool {
	if len(globs) == 0 {
		return true
	}
	if f.MediaHost == "" {
		return false
	}
	for _, g := range globs {
		if globMatch(g, f.MediaHost) {
			return true
		}
		for _, h := range f.MediaHostForms {
			if globMatch(g, h) {
				return true
			}
		}
	}
	return false
}

// structural says whether the rule's match fields select the task.
func (r *Rule) structural(f *Facts) bool {
	return fieldMatches(r.Capabilities, f.Capability) && fieldMatches(r.Agents, f.Agent) &&
		fieldMatches(r.Devices, f.Device) && hostMatches(r.MediaHosts, f)
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
