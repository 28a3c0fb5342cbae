// Package lease checks the lease tokens (JWTs) that authorize an agent's task,
// in the seeds' order, and issues them for people who are their own authority.
package lease

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/preview"
)

// Algorithms a lease may be signed with. Anything else (none, HS*, ES*, PS*)
// is refused before a key is even looked up.
const (
	AlgEdDSA = "EdDSA"
	AlgRS256 = "RS256"
)

// Defaults from the seeds.
const (
	DefaultIssuer   = "abos-policy-authority"
	DefaultAudience = "abos-executor"
	DefaultLeeway   = 30 * time.Second
	// NoLeeway asks for exact exp/nbf checks (Options.Leeway 0 means the default).
	NoLeeway = time.Duration(-1)
	// MaxTokenBytes bounds the work an oversized token can cause.
	MaxTokenBytes = task.MaxLeaseBytes
)

// Claims are a lease's claims: the registered ones plus the task it is for,
// the capabilities it grants and optional constraints.
type Claims struct {
	jwt.RegisteredClaims
	TaskID      string       `json:"task_id"`
	Caps        []string     `json:"caps"`
	Constraints *Constraints `json:"constraints,omitempty"`
}

// Constraints narrow what a lease allows.
type Constraints struct {
	Devices []string `json:"devices,omitempty"`
}

// Key is one trusted public key, chosen by kid, bound to one algorithm so a
// token cannot pick how its key is used.
type Key struct {
	KID    string
	Alg    string // AlgEdDSA or AlgRS256
	Public crypto.PublicKey
}

// Options configure a Verifier.
type Options struct {
	Issuer      string
	Audience    string
	Leeway      time.Duration // 0 means DefaultLeeway; NoLeeway for none
	Keys        []Key
	RevokedPath string           // one jti a line; a missing file revokes nothing
	Now         func() time.Time // injected clock
}

// Request is what a lease must cover.
type Request struct {
	TaskID       string
	CapabilityID string
	Device       string // checked against constraints.devices when both are set
}

// Verifier checks leases. It is safe for concurrent use.
type Verifier struct {
	opts    Options
	keys    map[string]Key
	revoked *revocationList
}

// NewVerifier builds a Verifier; empty issuer/audience take the seed's defaults.
func NewVerifier(opts Options) (*Verifier, error) {
	if opts.Issuer == "" {
		opts.Issuer = DefaultIssuer
	}
	if opts.Audience == "" {
		opts.Audience = DefaultAudience
	}
	switch {
	case opts.Leeway == NoLeeway:
		opts.Leeway = 0
	case opts.Leeway == 0:
		opts.Leeway = DefaultLeeway
	case opts.Leeway < 0:
		return nil, fmt.Errorf("leases.leeway: must not be negative, got %s", opts.Leeway)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	v := &Verifier{opts: opts, keys: map[string]Key{}, revoked: &revocationList{path: opts.RevokedPath}}
	for i, k := range opts.Keys {
		if k.KID == "" {
			return nil, fmt.Errorf("leases.keys[%d].kid: required", i)
		}
		if _, dup := v.keys[k.KID]; dup {
			return nil, fmt.Errorf("leases.keys[%d].kid: %q is listed twice", i, k.KID)
		}
		if err := checkKeyAlg(k.Alg, k.Public); err != nil {
			return nil, fmt.Errorf("leases.keys[%d] (kid %q): %w", i, k.KID, err)
		}
		v.keys[k.KID] = k
	}
	return v, nil
}

// FromConfig loads the trusted keys named in the config's [leases] section.
// Paths in cfg are expected to be absolute already (config.Load resolves them).
func FromConfig(cfg config.LeasesConfig, now func() time.Time) (*Verifier, error) {
	keys := make([]Key, 0, len(cfg.Keys))
	for i, k := range cfg.Keys {
		pub, err := LoadPublicKey(k.PublicKey)
		if err != nil {
			return nil, fmt.Errorf("leases.keys[%d].public_key: %w", i, err)
		}
		keys = append(keys, Key{KID: k.KID, Alg: k.Alg, Public: pub})
	}
	leeway := cfg.Leeway.Duration
	if leeway == 0 {
		leeway = NoLeeway // an explicit "0s" in the config
	}
	return NewVerifier(Options{Issuer: cfg.Issuer, Audience: cfg.Audience, Leeway: leeway,
		Keys: keys, RevokedPath: cfg.Revoked, Now: now})
}

func checkKeyAlg(alg string, pub crypto.PublicKey) error {
	switch alg {
	case AlgEdDSA:
		if _, ok := pub.(ed25519.PublicKey); !ok {
			return fmt.Errorf("alg EdDSA needs an Ed25519 public key, got %T", pub)
		}
	case AlgRS256:
		k, ok := pub.(*rsa.PublicKey)
		if !ok {
			return fmt.Errorf("alg RS256 needs an RSA public key, got %T", pub)
		}
		if k.N.BitLen() < 2048 {
			return fmt.Errorf("RSA key has %d bits; at least 2048 required", k.N.BitLen())
		}
	default:
		return fmt.Errorf("alg: must be EdDSA or RS256, got %q", alg)
	}
	return nil
}

func invalid(format string, args ...any) *task.Error {
	return task.Errorf(task.InvalidLease, format, args...)
}

// Check verifies token for req, in the seeds' order, stopping at the first
// failure:
//  1. signature: size, form, algorithm, kid, signature, iss, aud, then the
//     revocation list → INVALID_LEASE ("INVALID_LEASE: revoked" for a revoked jti);
//  2. task_id equals the manifest's → INVALID_LEASE;
//  3. expiry: exp required and in the future, nbf reached (leeway applies) →
//     LEASE_EXPIRED for exp, INVALID_LEASE for a missing exp or a future nbf;
//  4. capability in caps → UNSUPPORTED_CAPABILITY; device in
//     constraints.devices (when the lease has any) → INVALID_LEASE.
//
// Every error is a *task.Error whose message names the check that failed.
func (v *Verifier) Check(token string, req Request) (*Claims, error) {
	claims, err := v.verifySignature(token)
	if err != nil {
		return nil, err
	}
	if claims.TaskID != req.TaskID {
		return nil, invalid("task_id check failed: the lease is for task %q, the manifest is task %q", claims.TaskID, req.TaskID)
	}
	if err := v.checkTime(claims); err != nil {
		return nil, err
	}
	if !slices.Contains(claims.Caps, req.CapabilityID) {
		return nil, task.Errorf(task.UnsupportedCapability,
			"capability check failed: %s is not in the lease's caps %v", req.CapabilityID, claims.Caps)
	}
	if claims.Constraints != nil && len(claims.Constraints.Devices) > 0 && req.Device != "" &&
		!slices.Contains(claims.Constraints.Devices, req.Device) {
		return nil, invalid("capability check failed: device %q is not in the lease's constraints.devices %v",
			req.Device, claims.Constraints.Devices)
	}
	return claims, nil
}

// Verify runs only the signature step (1) and returns the claims; callers
// that need the agent id or jti before a full Check use it.
func (v *Verifier) Verify(token string) (*Claims, error) { return v.verifySignature(token) }

func (v *Verifier) verifySignature(token string) (*Claims, error) {
	if len(token) > MaxTokenBytes {
		return nil, invalid("signature check failed: token is larger than %d bytes", MaxTokenBytes)
	}
	if token == "" {
		return nil, invalid("signature check failed: token is empty")
	}
	claims := &Claims{}
	p := jwt.NewParser(
		jwt.WithValidMethods([]string{AlgEdDSA, AlgRS256}),
		jwt.WithStrictDecoding(),
		// Time claims are step 3, not step 1: the seeds order the checks.
		jwt.WithoutClaimsValidation(),
	)
	_, err := p.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		if kid == "" {
			return nil, errors.New("no kid in header")
		}
		k, ok := v.keys[kid]
		if !ok {
			return nil, fmt.Errorf("unknown kid %q", kid)
		}
		if t.Method.Alg() != k.Alg {
			return nil, fmt.Errorf("kid %q is an %s key, token says alg %s", kid, k.Alg, t.Method.Alg())
		}
		return k.Public, nil
	})
	if err != nil {
		return nil, invalid("signature check failed: %s", describe(err))
	}
	if claims.Issuer != v.opts.Issuer {
		return nil, invalid("signature check failed: iss is %q, expected %q", claims.Issuer, v.opts.Issuer)
	}
	if !slices.Contains([]string(claims.Audience), v.opts.Audience) {
		return nil, invalid("signature check failed: aud %v does not include %q", []string(claims.Audience), v.opts.Audience)
	}
	if claims.ID == "" {
		return nil, invalid("signature check failed: jti is required (revocation needs it)")
	}
	if err := checkShown(claims); err != nil {
		return nil, err
	}
	revoked, err := v.revoked.contains(claims.ID)
	if err != nil {
		// Fail closed: a revocation list we cannot read revokes everything.
		return nil, invalid("signature check failed: revocation list unreadable: %v", err)
	}
	if revoked {
		return nil, invalid("revoked")
	}
	return claims, nil
}

// checkShown refuses claims Vigil displays or keys on (sub, jti, task_id)
// when they hold control or invisible characters or are too long: a person
// must read exactly what the token says. The message names the claim and
// the rule, never the raw value.
func checkShown(c *Claims) error {
	if c.Subject == "" {
		return invalid("claims check failed: sub is required (it names the agent)")
	}
	for _, f := range []struct{ name, v string }{{"sub", c.Subject}, {"jti", c.ID}, {"task_id", c.TaskID}} {
		if err := task.CheckDisplay(f.v); err != nil {
			return invalid("claims check failed: %s %v", f.name, err)
		}
	}
	return nil
}

func (v *Verifier) checkTime(c *Claims) error {
	val := jwt.NewValidator(jwt.WithExpirationRequired(), jwt.WithLeeway(v.opts.Leeway),
		jwt.WithTimeFunc(v.opts.Now))
	err := val.Validate(c)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return invalid("expiry check failed: exp is required")
	case errors.Is(err, jwt.ErrTokenExpired):
		return task.Errorf(task.LeaseExpired, "expiry check failed: the lease expired at %s",
			c.ExpiresAt.UTC().Format(time.RFC3339))
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return invalid("expiry check failed: the lease is not valid before %s (nbf)",
			c.NotBefore.UTC().Format(time.RFC3339))
	}
	return invalid("expiry check failed: %s", describe(err))
}

// describe turns the library's error chain into a short reason without
// echoing token content.
func describe(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "malformed token: " + lastLine(err)
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return "bad signature or algorithm: " + lastLine(err)
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return "cannot verify: " + lastLine(err)
	}
	return lastLine(err)
}

func lastLine(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		s = s[i+1:]
	}
	// masked whole before it is cut: a token quoted in a parse error and cut
	// first could leave a part no mask recognises
	return preview.Snippet(s, 200)
}
