package config

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
)

// Grants make Vigil the lease authority for the agents it knows: a media
// call from an [[agents]] token that carries no lease gets one minted by
// the home's issuer key when one of the agent's [[agents.grants]] covers
// its capability, device and (to play) media host; any other is refused.
// A grant lets the agent ask; the person (or a rule) still decides.

// GrantConfig is one [[agents.grants]] entry: the capabilities it covers,
// on which devices, and for MEDIA_PLAY the hosts media may come from.
type GrantConfig struct {
	// Capabilities are media capabilities (GrantCapabilities), written
	// out: a grant is read by a person deciding what an agent may ask.
	Capabilities []string `toml:"capabilities" json:"capabilities"`
	// Devices are [[devices]] ids, written out.
	Devices []string `toml:"devices" json:"devices"`
	// MediaHosts are host globs (as [[rules]] media_hosts: lower-case,
	// ASCII, path.Match syntax) a MEDIA_PLAY may fetch from; required
	// with MEDIA_PLAY ("*" for any host), refused without it.
	MediaHosts []string `toml:"media_hosts,omitempty" json:"media_hosts,omitempty"`
}

// GrantCapabilities are what a grant may cover: the media capabilities
// (seed 004), the tasks that wait for a person.
var GrantCapabilities = []string{"MEDIA_PLAY", "MEDIA_PAUSE", "MEDIA_STOP", "MEDIA_SEEK"}

// grantPlay is the capability that fetches media from a host.
const grantPlay = "MEDIA_PLAY"

// Lease lifetimes of minted leases: short, since a lease is for one task.
// MaxLeaseTTL matches `vigil lease issue`'s bound (exec/lease.MaxIssueTTL).
const (
	DefaultLeaseTTL = 15 * time.Minute
	MaxLeaseTTL     = 24 * time.Hour
)

// EffectiveLeaseTTL is lease_ttl, or DefaultLeaseTTL when not set.
func (a AgentConfig) EffectiveLeaseTTL() time.Duration {
	if a.LeaseTTL.Duration == 0 {
		return DefaultLeaseTTL
	}
	return a.LeaseTTL.Duration
}

// Covers says whether the grant covers capability on device, and for
// MEDIA_PLAY whether hostMatch accepts one of its media_hosts globs (the
// caller matches hosts as rules do: every spelling of the host).
func (g GrantConfig) Covers(capability, device string, hostMatch func(globs []string) bool) bool {
	if !slices.Contains(g.Capabilities, capability) || !slices.Contains(g.Devices, device) {
		return false
	}
	return capability != grantPlay || hostMatch(g.MediaHosts)
}

// validateGrants checks an agent's lease_ttl and grants: known
// capabilities, configured devices, and media hosts exactly when the grant
// can play.
func validateGrants(key string, a AgentConfig, devices []DeviceConfig) error {
	if ttl := a.LeaseTTL.Duration; ttl < 0 || ttl > MaxLeaseTTL {
		return &Error{Key: key + ".lease_ttl", Rule: fmt.Sprintf("must be between 1s and %s, got %s", MaxLeaseTTL, ttl)}
	} else if ttl > 0 && ttl < time.Second {
		return &Error{Key: key + ".lease_ttl", Rule: fmt.Sprintf("must be at least 1s (leases count whole seconds), got %s", ttl)}
	}
	ids := make([]string, len(devices))
	for i, d := range devices {
		ids[i] = d.ID
	}
	for i, g := range a.Grants {
		if err := validateGrant(fmt.Sprintf("%s.grants[%d]", key, i), g, ids); err != nil {
			return err
		}
	}
	return nil
}

func validateGrant(key string, g GrantConfig, devices []string) error {
	if len(g.Capabilities) == 0 {
		return &Error{Key: key + ".capabilities", Rule: "at least one capability is required (" + strings.Join(GrantCapabilities, ", ") + ")"}
	}
	for j, c := range g.Capabilities {
		if !slices.Contains(GrantCapabilities, c) {
			return &Error{Key: fmt.Sprintf("%s.capabilities[%d]", key, j),
				Rule: fmt.Sprintf("must be one of %s (written out, no globs), got %q", strings.Join(GrantCapabilities, ", "), c)}
		}
	}
	if len(g.Devices) == 0 {
		return &Error{Key: key + ".devices", Rule: "at least one [[devices]] id is required"}
	}
	for j, d := range g.Devices {
		if !slices.Contains(devices, d) {
			return &Error{Key: fmt.Sprintf("%s.devices[%d]", key, j),
				Rule: fmt.Sprintf("must be a [[devices]] id (%s), got %q", strings.Join(devices, ", "), d)}
		}
	}
	plays := slices.Contains(g.Capabilities, grantPlay)
	switch {
	case plays && len(g.MediaHosts) == 0:
		return &Error{Key: key + ".media_hosts", Rule: `a grant with MEDIA_PLAY must name the hosts media may come from ("*" for any)`}
	case !plays && len(g.MediaHosts) > 0:
		return &Error{Key: key + ".media_hosts", Rule: "only MEDIA_PLAY fetches media: without it in capabilities, media_hosts would match nothing"}
	}
	for j, h := range g.MediaHosts {
		at := fmt.Sprintf("%s.media_hosts[%d]", key, j)
		if h == "" {
			return &Error{Key: at, Rule: "must not be empty"}
		}
		if _, err := path.Match(h, ""); err != nil {
			return &Error{Key: at, Rule: fmt.Sprintf("is not a glob (path.Match syntax: *, ?, [a-z], \\ escapes), got %q", h)}
		}
		if rule := hostGlobRule(h); rule != "" {
			return &Error{Key: at, Rule: rule}
		}
	}
	return nil
}
