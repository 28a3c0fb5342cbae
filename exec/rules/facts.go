package rules

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/vigil-dev/vigil/exec/media"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/preview"
	"github.com/vigil-dev/vigil/safetext"
)

// Facts are what a rule sees of a task: structured fields, never the
// text of a request.
type Facts struct {
	Agent      string `json:"agent"`
	Capability string `json:"capability"`
	Device     string `json:"device"`
	// MediaHost is the host MEDIA_PLAY's media_uri would be fetched from,
	// lower-case, in the form a resolver looks it up as (UTS-46 mapping,
	// else punycode); "" for other capabilities.
	MediaHost string `json:"media_host,omitempty"`
	// MediaHostForms are the other spellings of that host (as written,
	// punycode, the address a numeric host is): media_hosts globs are
	// tried against each, so a deny cannot be dodged by respelling.
	MediaHostForms []string `json:"media_host_forms,omitempty"`
	// PositionSeconds is MEDIA_SEEK's target; nil for other capabilities.
	PositionSeconds *float64 `json:"position_seconds,omitempty"`
	// Warnings are what the task's preview warns about (approval.View's
	// Warnings and its Problem): with any, no rule allows the task.
	Warnings []string `json:"warnings,omitempty"`
}

// AgentPrefix starts the subject of a lease this home mints for an
// [[agents]] entry ("agent:claude-home").
const AgentPrefix = "agent:"

// AgentOf is the agent a rule's `agents` globs are matched against for a
// lease subject: the [[agents]] name of a minted lease's "agent:NAME",
// else the subject as written.
func AgentOf(subject string) string { return strings.TrimPrefix(subject, AgentPrefix) }

// FactsOf are the facts of a planned media action submitted by agent,
// with the preview's warnings (the caller's: approval.View.Warnings, plus
// its Problem when the stored request changed).
func FactsOf(a media.Action, agent string, warnings []string) Facts {
	f := Facts{Agent: agent, Capability: a.Capability, Device: a.Device, Warnings: warnings}
	if a.Capability == media.CapPlay {
		f.MediaHost, f.MediaHostForms = HostOf(a.MediaURI)
	}
	if a.Capability == media.CapSeek {
		p := a.Position
		f.PositionSeconds = &p
	}
	return f
}

// FromManifest reads a manifest's facts as the queue would at submission:
// its inputs validated against the device allowlist, its media_uri's
// warnings as the preview shows them. The agent is the caller's (a
// verified lease's subject through AgentOf).
func FromManifest(m *task.Manifest, agent string, devices []string) (Facts, error) {
	a, err := media.ParseInputs(m.CapabilityID, m.Inputs, devices)
	if err != nil {
		return Facts{}, err
	}
	var in struct {
		MediaURI string `json:"media_uri"`
	}
	_ = json.Unmarshal(m.Inputs, &in)
	return FactsOf(a, agent, URIWarnings(in.MediaURI)), nil
}

// URIWarnings are a media URI's warnings as a task's preview lists them
// (approval.Queue.Preview): safe to show, each prefixed "media_uri ".
func URIWarnings(uri string) []string {
	if uri == "" {
		return nil
	}
	var out []string
	for _, w := range safetext.URLWarnings(preview.MaskString(uri)) {
		out = append(out, "media_uri "+w)
	}
	return out
}

// HostOf is a URI's host as rules compare it: lower-case, without a
// trailing dot, in the form resolvers look it up as (UTS-46 mapping, else
// punycode), and its other spellings. ("", nil) for a URI without a host
// (file:…, media-source:…) or one that does not parse.
func HostOf(uri string) (host string, forms []string) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", nil
	}
	h := strings.TrimSuffix(u.Hostname(), ".")
	if h == "" {
		return "", nil
	}
	info := safetext.InspectHost(h)
	lower := strings.ToLower(h)
	host = lower
	switch {
	case info.Mapped != "":
		host = strings.ToLower(info.Mapped)
	case info.ASCII != "":
		host = info.ASCII
	}
	for _, f := range []string{lower, info.ASCII, strings.ToLower(info.Mapped), info.Numeric} {
		if f != "" && f != host && !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	return host, forms
}
