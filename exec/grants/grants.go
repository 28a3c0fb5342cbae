// Package grants makes Vigil the lease authority for the agents it knows:
// a task an [[agents]] entry asks for without a lease gets one minted by
// the home's issuer key when one of the agent's [[agents.grants]] covers
// it, for exactly that task. It knows no transport: the MCP server mints
// for a token-identified caller, the shared queue's executor for an agent
// identified by its NATS user's submit subject.
package grants

import (
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/media"
	"github.com/vigil-dev/vigil/exec/rules"
	"github.com/vigil-dev/vigil/exec/task"
)

// AgentSubject is the sub of the leases an agent is given: agent:<name>.
func AgentSubject(name string) string { return "agent:" + name }

// EventLeaseIssued is the audit event of a lease Vigil minted under a
// grant: agent, task_id, capability, device, jti and exp, never the token.
const EventLeaseIssued = "lease_issued"

// Grants mints leases for the agents' grants.
type Grants struct {
	// Agents are the config's [[agents]], with their grants and lease_ttl.
	Agents []config.AgentConfig
	// Devices are the [[devices]] ids a request's inputs are read against
	// before a grant is looked for.
	Devices []string
	// Key signs the leases (keys/issuer.key.pem); KID is the kid the
	// lease verifier knows its public key by.
	Key crypto.Signer
	KID string
	// Issuer and Audience are [leases] issuer and audience.
	Issuer, Audience string
	// Rand makes the jti (nil: crypto/rand).
	Rand io.Reader
}

// Load builds the minter from the config when an agent has grants (nil,
// nil when none has): the issuer's private key from keyPath, and the kid of
// the [[leases.keys]] entry holding its public key. Minting with a key the
// verifier does not trust would make leases every task refuses, so that
// refuses the start instead.
func Load(cfg config.Config, keyPath string) (*Grants, error) {
	if GrantedAgent(cfg) == "" {
		return nil, nil
	}
	key, _, err := lease.LoadPrivateKey(keyPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("[[agents.grants]] need the issuer key %s to mint leases: run `vigil keys init` first", keyPath)
	}
	if err != nil {
		return nil, fmt.Errorf("[[agents.grants]]: the issuer key: %w", err)
	}
	kid, err := trustedKID(cfg.Leases, key.Public())
	if err != nil {
		return nil, err
	}
	g := &Grants{Agents: cfg.Agents, Key: key, KID: kid, Issuer: cfg.Leases.Issuer, Audience: cfg.Leases.Audience}
	for _, d := range cfg.Devices {
		g.Devices = append(g.Devices, d.ID)
	}
	return g, nil
}

// trustedKID is the kid of the [[leases.keys]] entry whose public key is
// pub: the one the queue's verifier checks a minted lease with.
func trustedKID(cfg config.LeasesConfig, pub crypto.PublicKey) (string, error) {
	eq, ok := pub.(interface{ Equal(crypto.PublicKey) bool })
	if !ok {
		return "", fmt.Errorf("[[agents.grants]]: the issuer key's type %T cannot be compared", pub)
	}
	for _, k := range cfg.Keys {
		p, err := lease.LoadPublicKey(k.PublicKey)
		if err == nil && eq.Equal(p) {
			return k.KID, nil
		}
	}
	return "", fmt.Errorf("[[agents.grants]]: leases minted with the issuer key would not verify: no [[leases.keys]] "+
		"entry holds its public key; add [[leases.keys]] kid = %q, alg = %q, public_key = \"keys/%s\" (as `vigil keys init` prints)",
		lease.LocalIssuerKID, lease.AlgEdDSA, lease.IssuerPubFile)
}

// Agent is the named agent's config; ok=false when none is configured.
func (g *Grants) Agent(name string) (config.AgentConfig, bool) {
	for _, a := range g.Agents {
		if a.Name == name {
			return a, true
		}
	}
	return config.AgentConfig{}, false
}

// grantFor is the index of the agent's first grant that covers the
// action, or -1 with what is not granted.
func grantFor(a config.AgentConfig, act media.Action) (int, string) {
	host, forms := "", []string(nil)
	if act.Capability == media.CapPlay {
		host, forms = rules.HostOf(act.MediaURI)
	}
	hostMatch := func(globs []string) bool { return rules.HostMatches(globs, host, forms) }
	for i, gr := range a.Grants {
		if gr.Covers(act.Capability, act.Device, hostMatch) {
			return i, ""
		}
	}
	what := fmt.Sprintf("agent %s has no grant for %s on %s", a.Name, act.Capability, act.Device)
	if act.Capability == media.CapPlay {
		if host == "" {
			what += " from a media_uri without a host (grants name hosts; a local file needs a lease)"
		} else {
			what += " from host " + ShowHost(host, forms)
		}
	}
	return -1, what
}

// ShowHost is a host as a message names it: its first spelling that is
// plain printable ASCII (the punycode form of a Unicode host), else
// quoted with escapes.
func ShowHost(host string, forms []string) string {
	for _, h := range append([]string{host}, forms...) {
		if plainASCII(h) {
			return h
		}
	}
	return strconv.QuoteToASCII(host)
}

func plainASCII(s string) bool {
	for _, r := range s {
		if r <= ' ' || r >= 0x7f {
			return false
		}
	}
	return s != ""
}

// NoLease says whether a call carries no lease: absent, null or "".
func NoLease(raw json.RawMessage) bool {
	var s *string
	return len(raw) == 0 || json.Unmarshal(raw, &s) == nil && (s == nil || *s == "")
}

// Minted is a lease minted under a grant, and what it was minted for.
type Minted struct {
	Token  string
	Claims *lease.Claims
	// Grant is the index of the agent's grant that covered the action.
	Grant  int
	Action media.Action
}

// Mint decides whether the agent's grants cover the task and, when they
// do, signs its lease: sub agent:<name>, the task_id, the one capability
// and device, lease_ttl from now. A refusal is a *task.Error: the inputs'
// own error (the request is read before a grant is looked for), or
// INVALID_LEASE naming what no grant covers; err is a failure to sign.
// It knows nothing of MCP, so any surface that knows the agent (a shared
// queue's executor) can mint the same way.
func (g *Grants) Mint(agent, taskID, capID string, inputs json.RawMessage, now func() time.Time) (*Minted, *task.Error, error) {
	act, err := media.ParseInputs(capID, inputs, g.Devices)
	if err != nil {
		var te *task.Error
		if !errors.As(err, &te) {
			te = task.Errorf(task.ExecutionFailed, "%v", err)
		}
		return nil, te, nil
	}
	a, _ := g.Agent(agent)
	a.Name = agent // an agent the grants do not list has none
	i, what := grantFor(a, act)
	if i < 0 {
		return nil, task.Errorf(task.InvalidLease, "lease: none given, and %s; "+
			"send a lease, or ask the person for an [[agents.grants]] entry", what), nil
	}
	tok, err := lease.Issue(g.Key, lease.IssueOptions{Issuer: g.Issuer, Audience: g.Audience, KID: g.KID,
		Subject: AgentSubject(agent), TaskID: taskID, Caps: []string{act.Capability}, Devices: []string{act.Device},
		TTL: a.EffectiveLeaseTTL(), Now: now, Rand: g.Rand})
	if err != nil {
		return nil, nil, err
	}
	var c lease.Claims
	if _, _, err := jwt.NewParser().ParseUnverified(tok, &c); err != nil {
		return nil, nil, err
	}
	return &Minted{Token: tok, Claims: &c, Grant: i, Action: act}, nil, nil
}

// GrantedAgent is the first [[agents]] entry with grants ("" when none has).
func GrantedAgent(cfg config.Config) string {
	for _, a := range cfg.Agents {
		if len(a.Grants) > 0 {
			return a.Name
		}
	}
	return ""
}
