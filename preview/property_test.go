package preview

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// secretGen makes deterministic secrets of every shape the masker knows. shaped secrets are recognisable by
// value; the others (passwords, opaque tokens) can only be masked by the name of their field.
type secretGen struct {
	r      *rand.Rand
	jwtKey []byte
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

func (g *secretGen) chars(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[g.r.IntN(len(set))]
	}
	return string(b)
}

func (g *secretGen) digits(n int) []byte {
	d := make([]byte, n)
	for i := range d {
		d[i] = byte('0' + g.r.IntN(10))
	}
	return d
}

// card makes a Luhn-valid number with a real-looking prefix, grouped by spaces, dashes or nothing.
func (g *secretGen) card() string {
	n := 13 + g.r.IntN(7)
	d := g.digits(n)
	d[0] = "3456"[g.r.IntN(4)]
	for c := byte('0'); c <= '9'; c++ {
		d[n-1] = c
		if luhn(d) {
			break
		}
	}
	sep := []string{"", " ", "-"}[g.r.IntN(3)]
	var parts []string
	for i := 0; i < n; i += 4 {
		parts = append(parts, string(d[i:min(i+4, n)]))
	}
	return strings.Join(parts, sep)
}

func (g *secretGen) ssn() string {
	for {
		area := fmt.Sprintf("%03d", 1+g.r.IntN(899))
		group := fmt.Sprintf("%02d", 1+g.r.IntN(99))
		serial := fmt.Sprintf("%04d", 1+g.r.IntN(9999))
		if validSSN(area, group, serial) {
			return area + "-" + group + "-" + serial
		}
	}
}

func (g *secretGen) pem() string {
	seed := []byte(g.chars(alnum, ed25519.SeedSize))
	der, err := x509.MarshalPKCS8PrivateKey(ed25519.NewKeyFromSeed(seed))
	if err != nil {
		panic(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

func (g *secretGen) jwt() string {
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": g.chars(alnum, 8), "jti": g.chars(alnum, 12)})
	s, err := tok.SignedString(g.jwtKey)
	if err != nil {
		panic(err)
	}
	return s
}

// next returns a secret and whether it is recognisable by value alone.
func (g *secretGen) next(i int) (string, bool) {
	switch i % 17 {
	case 0:
		return cat([]string{"sk_", "rk_"}[g.r.IntN(2)], []string{"live_", "test_", "prod_"}[g.r.IntN(3)], g.chars(alnum, 10+g.r.IntN(40))), true
	case 1:
		return cat("AKIA", g.chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)), true
	case 2:
		return cat("gh", string("pousr"[g.r.IntN(5)]), "_", g.chars(alnum, 36)), true
	case 3:
		return cat("github_pat_", g.chars(alnum+"_", 82)), true
	case 4:
		return cat("xox", string("abposer"[g.r.IntN(7)]), "-", g.chars("0123456789", 12), "-", g.chars(alnum, 24)), true
	case 5:
		return cat("glpat-", g.chars(alnum+"_-", 20)), true
	case 6:
		return cat("AIza", g.chars(alnum+"_-", 35)), true
	case 7:
		return cat("sk-", []string{"", "proj-"}[g.r.IntN(2)], g.chars(alnum, 48)), true
	case 8:
		return cat("sk-", "ant-api03-", g.chars(alnum+"_-", 93)), true
	case 9:
		return g.jwt(), true
	case 10:
		return g.pem(), true
	case 11:
		return g.card(), true
	case 12:
		return g.ssn(), true
	case 13:
		return g.chars("abcdefghijklmnopqrstuvwxyz", 1+g.r.IntN(10)) + "." + g.chars(alnum, 3) + "@" +
			g.chars("abcdefghijklmnopqrstuvwxyz", 3+g.r.IntN(8)) + ".example.com", true
	case 14:
		return cat(g.chars(alnum+"!#$%^()_+", 10+g.r.IntN(20)), "Z9"), false // a password
	case 15:
		return g.chars(alnum+"-_.", 16+g.r.IntN(32)), false // an opaque bearer token
	default:
		return g.chars(alnum, 12), false // a URL password
	}
}

// needles are the forms of a secret that must not appear: itself, its JSON, URL and digits-only encodings,
// and for a PEM block each line of its body.
func needles(secret string) []string {
	js, _ := json.Marshal(secret)
	out := []string{secret, string(js[1 : len(js)-1]), url.QueryEscape(secret), url.PathEscape(secret)}
	if d := digitsOf(secret); len(d) >= 13 && len(d) <= 19 && luhn(d) && len(d) == len(strings.Trim(secret, " -0123456789"))+len(d) {
		out = append(out, string(d))
		if len(secret) >= 17 {
			// The middle groups alone: a mask that covered only the first group would leave these.
			out = append(out, secret[5:len(secret)-4])
		}
	}
	if strings.Contains(secret, "PRIVATE KEY") {
		for _, line := range strings.Split(secret, "\n") {
			if len(line) >= 16 && !strings.HasPrefix(line, "-----") {
				out = append(out, line)
			}
		}
	}
	return out
}

// placeRequest puts the secret everywhere a driver might: URL (userinfo, path, query, fragment), headers,
// and a JSON or form body, nested, under both neutral and secret names as the secret's kind allows.
func placeRequest(g *secretGen, secret string, shaped bool) (Request, string) {
	q := url.QueryEscape(secret)
	var req Request
	if shaped {
		u := "https://api.example/v1/" + url.PathEscape(secret) + "/x?q=" + q + "&page=2#frag=" + q
		req = Request{Method: "POST", URL: u, Headers: map[string]string{
			"Authorization": "Bearer " + secret,
			"X-Note":        "see " + strings.ReplaceAll(secret, "\n", " ") + " here",
			"Accept":        "application/json",
		}}
	} else {
		u := "https://bob:" + q + "@api.example/v1/items?password=" + q + "&page=2#access_token=" + q
		req = Request{Method: "POST", URL: u, Headers: map[string]string{
			"Authorization": "Bearer " + secret,
			"X-Api-Key":     secret,
			"Cookie":        "sid=" + q,
		}}
	}
	if g.r.IntN(2) == 0 {
		body := map[string]any{
			"entity_id": "media_player.tv",
			"a":         map[string]any{"list": []any{map[string]any{"password": secret, "api_token": secret}}},
		}
		if shaped {
			body["note"] = "value " + secret + " end"
			body["a"].(map[string]any)["list"] = append(body["a"].(map[string]any)["list"].([]any), secret, []any{map[string]any{"x": secret}})
		}
		b, _ := json.Marshal(body)
		req.Body, req.ContentType = b, "application/json"
	} else {
		form := "user=bob&password=" + q + "&client_secret=" + q
		if shaped {
			form += "&note=" + q
		}
		req.Body, req.ContentType = []byte(form), "application/x-www-form-urlencoded"
	}
	return req, "plays movie.mkv with " + secret
}

func TestPropertyNoSecretLeaks(t *testing.T) {
	const n = 10000
	g := &secretGen{r: rand.New(rand.NewPCG(20240607, 7)), jwtKey: []byte("property-test-hs256-key-0123456789")}
	var logBuf bytes.Buffer
	logger := slog.New(NewMaskingHandler(slog.NewJSONHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	for i := range n {
		secret, shaped := g.next(i)
		req, effect := placeRequest(g, secret, shaped)
		p := Build(req, effect)
		out, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Hash()...)

		logBuf.Reset()
		logger.Info("sending "+req.URL, "url", req.URL, "headers", req.Headers, "body", string(req.Body),
			"err", errors.New("request failed: password="+secret), slog.Group("req", "password", secret, "api_key", secret))
		logger.With("token", secret).WithGroup("g").Warn(effect, "content", req.Body)
		if shaped {
			logger.Debug("value "+secret, "note", secret, "bytes", []byte(secret))
		}
		for _, nd := range needles(secret) {
			if bytes.Contains(out, []byte(nd)) {
				t.Fatalf("secret #%d (%q) leaked into the preview:\n%s", i, secret, out)
			}
			if bytes.Contains(logBuf.Bytes(), []byte(nd)) {
				t.Fatalf("secret #%d (%q) leaked into slog output:\n%s", i, secret, logBuf.Bytes())
			}
		}
	}
}
