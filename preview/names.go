package preview

import (
	"strings"
	"unicode"
)

// fieldKind says how a value is masked when its field name alone marks it as sensitive.
type fieldKind int

const (
	kindNone          fieldKind = iota // not sensitive by name; value detectors still run
	kindPassword                       // always the fixed-width mask
	kindSecret                         // tokens and keys: vendor shape if recognised, else the fixed mask
	kindAuthorization                  // keeps the scheme: "Bearer sk_...wxyz"
	kindCookie                         // every cookie value masked, names kept
	kindSetCookie                      // the cookie's value masked, attributes kept
	kindCard                           // ****-****-****-1234
	kindSSN                            // ***-**-1234
	kindGrant                          // an OAuth code: the fixed mask when the value reads as one
)

// exactNames is the notes' list plus a few common spellings, compared after normalize().
var exactNames = map[string]fieldKind{}

func init() {
	add := func(k fieldKind, names ...string) {
		for _, n := range names {
			exactNames[normalize(n)] = k
		}
	}
	add(kindAuthorization, "authorization", "proxy-authorization")
	add(kindCookie, "cookie")
	add(kindSetCookie, "set-cookie")
	add(kindPassword, "password", "passwd", "pwd", "pass", "passphrase", "cvv", "cvv2", "cvc", "otp", "pin")
	add(kindSecret, "x-api-key", "api-key", "api_key", "apikey", "x-auth-token", "access_token",
		"refresh_token", "token", "secret", "auth", "credentials", "credential", "private_key",
		"privatekey", "session", "sessionid", "session_id", "sig", "signature", "x-amz-signature",
		"x-amz-credential", "x-amz-security-token", "x-goog-signature", "x-goog-credential", "client_secret")
	// Session ids travel as cookies, query parameters and path parameters (";jsessionid=…"); "sid" alone
	// is how several frameworks name them. hdnts is Akamai's token-auth parameter on signed CDN URLs.
	add(kindSecret, "jsessionid", "phpsessid", "sessid", "sid", "cfid", "cftoken", "hdnts", "hmac",
		"aspnetsessionid", "connect.sid")
	// OAuth authorization and device codes are exchanged for tokens; "code" alone also names status and
	// country codes, so the value decides (grantLike).
	add(kindGrant, "code", "auth_code", "authorization_code", "oauth_code", "device_code")
	add(kindSSN, "ssn", "social_security_number")
	add(kindCard, "card_number", "credit_card", "cc_number", "creditcard_number")
}

// keyQualifiers are words that, next to "key", name something that is not a secret (primary_key, sort_key).
var keyQualifiers = map[string]bool{
	"primary": true, "foreign": true, "public": true, "pub": true, "sort": true, "partition": true,
	"cache": true, "idempotency": true, "unique": true, "composite": true, "row": true, "range": true,
	"hash": true, "lookup": true, "map": true, "object": true, "dedup": true, "dedupe": true,
	"routing": true, "shard": true, "cluster": true, "group": true, "i18n": true, "translation": true,
	"react": true, "list": true, "media": true, "content": true, "event": true,
}

// keySuffixes are words after "key" that make the field describe a key rather than hold one (key_id, key_file).
var keySuffixes = map[string]bool{
	"id": true, "ids": true, "name": true, "type": true, "size": true, "len": true, "length": true,
	"count": true, "format": true, "alg": true, "algorithm": true, "path": true, "file": true,
	"version": true, "code": true, "press": true, "binding": true, "bindings": true, "map": true,
	"pair": true, // CloudFront's Key-Pair-Id names the public key that checks the signature
}

// describedBy are words after "signature" or "credential" that make the field describe one rather than hold
// it (signature_method, credential_type, X-Amz-SignedHeaders has no such word and stays readable anyway).
var describedBy = map[string]bool{
	"version": true, "method": true, "alg": true, "algorithm": true, "type": true, "id": true, "ids": true,
	"name": true, "scope": true, "provider": true, "expiry": true, "expires": true, "file": true, "path": true,
}

// keyCompounds are glued prefixes of "key" that do hold secrets (apikey, secretkey); anything else glued to
// "key" (monkey, turkey, hockey) is an ordinary word.
var keyCompounds = map[string]bool{
	"api": true, "private": true, "secret": true, "access": true, "auth": true, "session": true,
	"master": true, "signing": true, "encryption": true, "client": true, "app": true, "license": true,
	"shared": true, "account": true, "service": true, "webhook": true, "hmac": true, "sign": true,
	"decryption": true, "crypto": true, "aes": true, "ssh": true, "gpg": true, "pgp": true, "x": true,
}

// normalize lowercases and drops separators so "Card-Number", "cardNumber" and "card_number" compare equal.
func normalize(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r == '-' || r == '_' || r == '.' || r == ' ' {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// words splits a field name at separators and camelCase boundaries, lowercased.
func words(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && len(cur) > 0 &&
			(unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// classifyName decides whether a header, JSON key, query or form name marks its value as sensitive.
func classifyName(name string) fieldKind {
	if name == "" {
		return kindNone
	}
	if k, ok := exactNames[normalize(name)]; ok {
		return k
	}
	ws := words(name)
	kind := kindNone
	for i, w := range ws {
		switch {
		case strings.Contains(w, "password") || strings.Contains(w, "passwd") || strings.Contains(w, "passphrase") ||
			w == "pwd" || w == "pass":
			return kindPassword
		case strings.Contains(w, "token"):
			kind = kindSecret
		case strings.Contains(w, "secret") && !strings.HasPrefix(w, "secretar"):
			kind = kindSecret
		case w == "key" || w == "keys":
			if !keyIsQualified(ws, i) {
				kind = kindSecret
			}
		case strings.HasSuffix(w, "key") || strings.HasSuffix(w, "keys"):
			stem := strings.TrimSuffix(strings.TrimSuffix(w, "s"), "key")
			if keyCompounds[stem] {
				kind = kindSecret
			}
		case w == "signature" || w == "sig" || w == "credential" || w == "credentials":
			// X-Oss-Signature, X-Hub-Signature-256, oauth_signature, X-Oss-Credential; but not
			// signature_method, credential_id, or withCredentials (a flag).
			if !(i+1 < len(ws) && describedBy[ws[i+1]]) && !(i > 0 && ws[i-1] == "with") {
				kind = kindSecret
			}
		case strings.Contains(w, "sessionid") || strings.Contains(w, "sessid"):
			kind = kindSecret // ASPSESSIONIDQQGGQGPA, X-Session-Id is words ("session", "id"), below
		case w == "session" && i+1 < len(ws) && (ws[i+1] == "id" || ws[i+1] == "cookie"):
			kind = kindSecret
		case w == "ssn":
			return kindSSN
		case w == "cvv" || w == "cvc" || w == "otp":
			return kindPassword
		}
	}
	if kind == kindNone {
		n := normalize(name)
		switch {
		case strings.Contains(n, "cardnumber") || strings.Contains(n, "creditcard"):
			return kindCard
		}
	}
	return kind
}

// keyIsQualified reports whether the word "key" at ws[i] is a non-secret compound (primary_key, key_id).
func keyIsQualified(ws []string, i int) bool {
	if i > 0 && keyQualifiers[ws[i-1]] {
		return true
	}
	if i+1 < len(ws) && keySuffixes[ws[i+1]] {
		return true
	}
	return false
}
