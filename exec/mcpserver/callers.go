package mcpserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vigil-dev/vigil/exec/grants"
	"github.com/vigil-dev/vigil/internal/httpguard"
)

// Who calls over Streamable HTTP is what its bearer token says, never what
// the client reports about itself (initialize's clientInfo is a label). A
// token is either an agent's ([[agents]]: the call acts as that agent, and
// a lease naming another agent is refused) or the shared [mcp] token (no
// identity: leases are checked as on stdio).

// Token is one bearer token the HTTP endpoint takes.
type Token struct {
	// Value is the token itself; it is kept only as a digest.
	Value string
	// Agent is the [[agents]] name the token belongs to; empty for the
	// shared [mcp] token.
	Agent string
	// From says where the token was read, for errors ("[mcp] token_file x").
	From string
}

// Callers maps bearer tokens to who presents them. It holds digests only,
// and a lookup compares against every one in constant time.
type Callers struct {
	entries []callerEntry
}

type callerEntry struct {
	sum   [sha256.Size]byte
	agent string
}

// NewCallers checks the tokens and builds the table: at least one token,
// none holding spaces or control characters (a bearer token is one header
// word), and no token given twice (a token names one caller).
func NewCallers(tokens []Token) (*Callers, error) {
	if len(tokens) == 0 {
		return nil, errors.New("no bearer token: set VIGIL_MCP_TOKEN, [mcp] token_file or an [[agents]] token")
	}
	c := &Callers{}
	seen := map[[sha256.Size]byte]Token{}
	for _, t := range tokens {
		if i := strings.IndexFunc(t.Value, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
			return nil, fmt.Errorf("%s: the token holds a space or control character at byte %d; "+
				"a bearer token is one word (make one with: openssl rand -hex 32)", t.From, i)
		}
		sum := sha256.Sum256([]byte(t.Value))
		if other, dup := seen[sum]; dup {
			return nil, fmt.Errorf("%s: the same token as %s; a token names one caller, give each its own", t.From, other.From)
		}
		seen[sum] = t
		c.entries = append(c.entries, callerEntry{sum: sum, agent: t.Agent})
	}
	return c, nil
}

// lookup finds the token's entry: every digest is compared, whatever
// matched, so the time taken says nothing about which token or how much of
// it matched.
func (c *Callers) lookup(token string) (agent string, ok bool) {
	sum := sha256.Sum256([]byte(token))
	found := -1
	for i, e := range c.entries {
		found = subtle.ConstantTimeSelect(subtle.ConstantTimeCompare(sum[:], e.sum[:]), i, found)
	}
	if found < 0 {
		return "", false
	}
	return c.entries[found].agent, true
}

// Agents says whether any token is an agent's.
func (c *Callers) Agents() bool {
	for _, e := range c.entries {
		if e.agent != "" {
			return true
		}
	}
	return false
}

// agentInfoKey is where the caller's agent sits in the token info's Extra.
const agentInfoKey = "vigil_agent"

// sharedUserID is the token info's UserID for the shared token; an agent's
// is AgentSubject(name). The SDK binds each session to the UserID that
// opened it, so one caller's session id is useless with another's token.
const sharedUserID = "mcp-token"

type callerCtxKey struct{}

// Authenticate lets through requests carrying a known token
// ("Authorization: Bearer <token>", exactly) and hands who calls to the
// tools through the SDK's token info (mcp.RequestExtra.TokenInfo), which
// also binds each session to its caller. A refused request gets 401 and its
// connection is closed; the token is never logged.
func (c *Callers) Authenticate(next http.Handler) http.Handler {
	// The SDK's middleware is the one way to set the token info the SDK
	// reads; its verifier takes the caller found below.
	sdk := auth.RequireBearerToken(func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		if ti, ok := r.Context().Value(callerCtxKey{}).(*auth.TokenInfo); ok {
			return ti, nil
		}
		return nil, auth.ErrInvalidToken
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		agent, known := c.lookup(got)
		if !ok || !known {
			w.Header().Set("WWW-Authenticate", `Bearer realm="vigil"`)
			httpguard.Refuse(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		ti := &auth.TokenInfo{UserID: sharedUserID}
		if agent != "" {
			ti = &auth.TokenInfo{UserID: AgentSubject(agent), Extra: map[string]any{agentInfoKey: agent}}
		}
		sdk.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerCtxKey{}, ti)))
	})
}

// CallerAgent is the [[agents]] name whose token a call came with; empty
// for a call over stdio or with the shared [mcp] token. It is the only
// identity a call has: the client's reported name is a label.
func CallerAgent(req *mcp.CallToolRequest) string {
	if req == nil || req.Extra == nil || req.Extra.TokenInfo == nil {
		return ""
	}
	a, _ := req.Extra.TokenInfo.Extra[agentInfoKey].(string)
	return a
}

// AgentSubject is the lease sub that names an agent, as `vigil` mints it:
// "agent:<name>". Only this spelling matches: the bare name would let one
// sub name two agents ("bob" and one called "agent:bob"), and the audit
// trail, which records the sub as the actor, would show one agent two ways.
func AgentSubject(name string) string { return grants.AgentSubject(name) }
