package lease

import (
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/exec/task"
)

// Claims Vigil shows or keys on (sub, jti, task_id) are refused when they
// hold control or invisible characters or are too long: INVALID_LEASE, a
// message naming the claim and the rule, never the raw value.
func TestShownClaimsMustBePlainText(t *testing.T) {
	k := getKeys(t)
	v := newVerifier(t, k, "")
	sign := func(in string) []byte { return ed25519.Sign(k.ed, []byte(in)) }
	cases := []struct {
		name, claim string
		value       any
		rule        string
	}{
		{"empty sub", "sub", "", "sub is required"},
		{"escape in sub", "sub", "agent\x1b]0;pwned\x07", "sub must not contain a control character"},
		{"bidi override in sub", "sub", "agent\u202eevil", "sub must not contain a format"},
		{"zero-width in jti", "jti", "jti\u200b1", "jti must not contain a format"},
		{"line separator in task_id", "task_id", "task\u20281", "task_id must not contain a line or paragraph separator"},
		{"no-break space in sub", "sub", "agent\u00a07", "sub must not contain a space other than U+0020"},
		{"long jti", "jti", strings.Repeat("j", 257), "jti longer than 256 bytes"},
	}
	for _, c := range cases {
		tok := forge(`{"alg":"EdDSA","typ":"JWT","kid":"ed-1"}`, claimsJSON(func(m map[string]any) { m[c.claim] = c.value }), sign)
		_, err := v.Check(tok, req)
		var te *task.Error
		if !errors.As(err, &te) || te.Code != task.InvalidLease || !strings.Contains(te.Message, c.rule) {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if s, _ := c.value.(string); s != "" && len(s) < 100 && strings.Contains(te.Message, s) {
			t.Errorf("%s: the message echoes the raw value: %q", c.name, te.Message)
		}
	}
	// plain text passes, spaces and non-ASCII letters included
	tok := forge(`{"alg":"EdDSA","typ":"JWT","kid":"ed-1"}`, claimsJSON(func(m map[string]any) { m["sub"] = "agent Zoë 7" }), sign)
	if _, err := v.Check(tok, req); err != nil {
		t.Fatalf("plain sub refused: %v", err)
	}
}
