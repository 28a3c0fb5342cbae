package preview

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"testing"
)

// placed is one request carrying a secret somewhere, and the effect line that goes with it.
type placed struct {
	where  string
	req    Request
	effect string
}

func jsonBody(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// valuePlacements put a secret everywhere a driver might, under names that say nothing about it, so
// only its shape can give it away: URL path, query (once and twice encoded), fragment, headers, JSON
// (plain, in prose, nested, base64-wrapped), a form, a text body and the effect line.
func valuePlacements(s string) []placed {
	q, p := url.QueryEscape(s), url.PathEscape(s)
	oneLine := strings.ReplaceAll(s, "\n", " ")
	base := "https://api.example/v1/"
	return []placed{
		{"url-path", Request{Method: "POST", URL: base + p + "/play"}, "now: plays movie.mkv"},
		{"url-query", Request{Method: "POST", URL: base + "play?q=" + q + "&page=2"}, "now: plays movie.mkv"},
		{"url-query-twice-encoded", Request{Method: "POST", URL: base + "play?q=" + url.QueryEscape(q)}, "now: plays"},
		{"url-in-url", Request{Method: "POST", URL: base + "go?next=" + url.QueryEscape("https://cb.example/x?v="+q)}, "now"},
		{"url-fragment", Request{Method: "GET", URL: base + "cb#" + p}, "now: opens the callback"},
		{"header-prose", Request{Method: "POST", URL: base, Headers: map[string]string{"X-Note": "see " + oneLine + " here"}}, "now"},
		{"header-bearer", Request{Method: "POST", URL: base, Headers: map[string]string{"Authorization": "Bearer " + oneLine}}, "now"},
		{"json", Request{Method: "POST", URL: base, ContentType: "application/json", Body: jsonBody(map[string]any{
			"entity_id": "media_player.tv", "note": "value " + s + " end", "list": []any{s, map[string]any{"x": s}},
		})}, "now: plays movie.mkv"},
		{"json-base64", Request{Method: "POST", URL: base, ContentType: "application/json", Body: jsonBody(map[string]any{
			"blob": base64.StdEncoding.EncodeToString([]byte(s)),
		})}, "now"},
		{"url-path-base64", Request{Method: "POST", URL: base + base64.RawURLEncoding.EncodeToString([]byte(s)) + "/x"}, "now"},
		{"header-base64", Request{Method: "POST", URL: base, Headers: map[string]string{"X-Blob": base64.StdEncoding.EncodeToString([]byte(s))}}, "now"},
		{"form", Request{Method: "POST", URL: base, ContentType: "application/x-www-form-urlencoded", Body: []byte("user=bob&note=" + q)}, "now"},
		{"text", Request{Method: "POST", URL: base, ContentType: "text/plain", Body: []byte("log: " + s + "\n")}, "now"},
		{"effect", Request{Method: "POST", URL: base}, "now: plays " + s + " on media_player.tv"},
	}
}

// urlPlacements put a whole secret-bearing URL where a driver might: as the request URL, in a header, in
// JSON, in a form, as a parameter of another URL, and in the effect line.
func urlPlacements(u string) []placed {
	base := "https://api.example/v1/"
	return []placed{
		{"request-url", Request{Method: "POST", URL: u}, "now: posts a message"},
		{"header", Request{Method: "POST", URL: base, Headers: map[string]string{"X-Callback": u}}, "now"},
		{"json", Request{Method: "POST", URL: base, ContentType: "application/json", Body: jsonBody(map[string]any{
			"callback": u, "list": []any{map[string]any{"target": u}},
		})}, "now"},
		{"form", Request{Method: "POST", URL: base, ContentType: "application/x-www-form-urlencoded", Body: []byte("target=" + url.QueryEscape(u))}, "now"},
		{"url-param", Request{Method: "POST", URL: base + "subscribe?callback=" + url.QueryEscape(u)}, "now"},
		{"effect", Request{Method: "POST", URL: base}, "now: posts to " + u + "."},
		{"effect-no-scheme", Request{Method: "POST", URL: base}, "now: posts to " + strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")},
	}
}

// shownForms are the ways a hidden part could appear in serialised output: as is, JSON-escaped, and
// percent-encoded for a query or a path.
func shownForms(h string) []string {
	js, _ := json.Marshal(h)
	return []string{h, string(js[1 : len(js)-1]), url.QueryEscape(h), url.PathEscape(h)}
}

func checkHidden(t *testing.T, shape, where string, smp sample, p HTTPPreview) {
	t.Helper()
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range smp.hidden {
		for _, f := range shownForms(h) {
			if strings.Contains(string(out), f) {
				t.Errorf("%s in %s: %q shows in the preview:\n%s", shape, where, f, out)
				return
			}
		}
	}
}

// TestPropertyShapesNeverShow generates secrets of every supported shape, places each inside URLs,
// headers, JSON, form and text bodies and the effect line, and finds no hidden part of any of them in the
// preview.
func TestPropertyShapesNeverShow(t *testing.T) {
	const rounds = 8
	g := newShapeGen(20261126)
	for range rounds {
		for _, sh := range secretShapes {
			smp := sh.make(g)
			for _, pl := range valuePlacements(smp.secret) {
				checkHidden(t, sh.name, pl.where, smp, Build(pl.req, pl.effect))
			}
		}
		for _, sh := range webhookShapes {
			smp := sh.make(g)
			for _, pl := range urlPlacements(smp.secret) {
				checkHidden(t, sh.name, pl.where, smp, Build(pl.req, pl.effect))
			}
		}
		if t.Failed() {
			return
		}
	}
}

// TestShapeScannersOnNoise feeds the hand-written scanners text built from the pieces they look for
// (prefixes, separators, escapes, base64 runs) in random order and length: nothing may panic, and no
// secret the masker noted may survive in its output (FuzzMaskString's invariant, run deterministically).
func TestShapeScannersOnNoise(t *testing.T) {
	g := newShapeGen(99)
	pieces := []string{"sk-", "AKIA", "ghp_", "bot", "123456789", ":", "AA", "Q~", "-us1", "%", "%3D", "%2", "=", "==",
		"/", ".", "..", "+", " ", "\n", "https://", "hooks.slack.com/services/", "/api/webhook/", ";jsessionid=",
		"token=", "password: ", "eyJ", "-----BEGIN PRIVATE KEY-----", "@", "4111", "-"}
	for i := range 3000 {
		var b strings.Builder
		for range 1 + g.r.IntN(24) {
			if g.r.IntN(3) == 0 {
				b.WriteString(g.of(csB64+"_-~", 1+g.r.IntN(48)))
			} else {
				b.WriteString(pieces[g.r.IntN(len(pieces))])
			}
		}
		in := b.String()
		if i%2 == 1 {
			in = base64.StdEncoding.EncodeToString([]byte(in))
		}
		out := MaskString(in)
		m := newMasker()
		m.text(in, true)
		for s := range m.secrets {
			if strings.Contains(out, s) {
				t.Fatalf("noted secret %q survived: %q -> %q", s, in, out)
			}
		}
	}
}

// TestPropertyShapesNeverLogged sends every shape through the masking slog handler: in the message, as an
// attribute under a neutral name, inside an error, base64-wrapped, and (for URL shapes) as a URL.
func TestPropertyShapesNeverLogged(t *testing.T) {
	g := newShapeGen(4242)
	var buf bytes.Buffer
	log := slog.New(NewMaskingHandler(slog.NewJSONHandler(&buf, nil)))
	for _, sh := range append(append([]secretShape{}, secretShapes...), webhookShapes...) {
		smp := sh.make(g)
		buf.Reset()
		log.Info("sending "+smp.secret, "note", smp.secret, "err", errors.New("request failed: "+smp.secret),
			"blob", base64.StdEncoding.EncodeToString([]byte(smp.secret)))
		for _, h := range smp.hidden {
			for _, f := range shownForms(h) {
				if strings.Contains(buf.String(), f) {
					t.Errorf("%s: %q shows in the log:\n%s", sh.name, f, buf.String())
				}
			}
		}
	}
}
