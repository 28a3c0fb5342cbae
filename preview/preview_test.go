package preview

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./preview -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from golden:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func haRequest(t *testing.T) Request {
	token := realJWT(t, "home-assistant")
	return Request{
		Method: "post",
		URL:    "https://ha.local:8123/api/services/media_player/play_media?api_key=q1w2e3r4t5&entity=tv",
		Headers: map[string]string{
			"Authorization": "Bearer " + token,
			"Content-Type":  "application/json",
			"X-Request-Id":  "req-42",
		},
		Body: []byte(`{"entity_id":"media_player.tv","media_content_id":"https://cdn.example/media/token_ring.mp3?sig=abc123def",` +
			`"media_content_type":"music","extra":{"account":{"email":"jane@example.com","password":"hunter22"},` +
			`"cards":[{"number":"4111 1111 1111 1111","primary_key":7}],"ssn":"078-05-1120"}}`),
		ContentType: "application/json",
	}
}

func TestBuildGolden(t *testing.T) {
	p := Build(haRequest(t), "now: paused at 12:31 of a.mp3 → plays token_ring.mp3 from the start (password was hunter22)")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(p); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	golden(t, "preview_ha", b)
	for _, secret := range []string{"q1w2e3r4t5", "abc123def", "jane@example.com", "hunter22", "4111 1111 1111 1111", "078-05-1120", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ"} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("preview JSON leaks %q", secret)
		}
	}
	if p.Body.Preview["media_content_type"] != "music" || p.Body.Preview["extra.cards.0.primary_key"] != "7" {
		t.Errorf("safe fields missing from body.preview: %v", p.Body.Preview)
	}
	if p.Body.Masked["extra.account.password"] != Fixed || p.Body.Masked["extra.cards.0.number"] != "****-****-****-1111" ||
		p.Body.Masked["extra.ssn"] != "***-**-1120" || p.Body.Masked["extra.account.email"] != "j***@example.com" {
		t.Errorf("masked fields wrong: %v", p.Body.Masked)
	}
	if p.Method != "POST" || !strings.HasPrefix(p.Headers["Authorization"], "Bearer eyJ...") {
		t.Errorf("method %q, authorization %q", p.Method, p.Headers["Authorization"])
	}
}

func TestBuildForm(t *testing.T) {
	p := Build(Request{Method: "POST", URL: "https://shop.example/checkout", ContentType: "application/x-www-form-urlencoded; charset=utf-8",
		Body: []byte("email=jane%40example.com&password=pw&qty=2&qty=3&card_number=4111111111111111")}, "buys 2 items")
	wantMasked := map[string]string{"email": "j***@example.com", "password": Fixed, "card_number": "****-****-****-1111"}
	wantSafe := map[string]string{"qty": "2", "qty.1": "3"}
	if !mapsEqual(p.Body.Masked, wantMasked) || !mapsEqual(p.Body.Preview, wantSafe) {
		t.Fatalf("masked %v preview %v", p.Body.Masked, p.Body.Preview)
	}
	if p.Raw != "email=j***@example.com&password=********&qty=2&qty=3&card_number=****-****-****-1111" {
		t.Fatalf("raw %q", p.Raw)
	}
}

func TestBuildTextAndBinaryAndEmpty(t *testing.T) {
	p := Build(Request{Method: "PUT", URL: "/x", Body: []byte("note for bob@example.com")}, "")
	if p.Body.Masked["$"] != "note for b***@example.com" || p.Raw != "note for b***@example.com" {
		t.Fatalf("text body: %+v", p.Body)
	}
	p = Build(Request{Method: "PUT", URL: "/x", Body: []byte{0xff, 0xfe, 0x00, 'a'}}, "")
	if !strings.HasPrefix(p.Body.Preview["$"], "<binary body: 4 bytes, sha256 ") {
		t.Fatalf("binary body: %+v", p.Body)
	}
	p = Build(Request{}, "")
	b, _ := json.Marshal(p)
	if string(b) != `{"method":"","url":"","headers":{},"body":{"masked":{},"preview":{}},"estimatedEffect":"","raw":""}` {
		t.Fatalf("empty preview: %s", b)
	}
}

func TestHash(t *testing.T) {
	req := haRequest(t)
	a := Build(req, "plays")
	if a.Hash() != Build(req, "plays").Hash() {
		t.Fatal("same request, different hash")
	}
	if len(a.Hash()) != 64 {
		t.Fatalf("hash %q is not hex SHA-256", a.Hash())
	}
	// Canonical: map order and JSON escaping do not matter, content does.
	var round HTTPPreview
	if err := json.Unmarshal(a.Canonical(), &round); err != nil {
		t.Fatal(err)
	}
	if round.Hash() != a.Hash() {
		t.Fatal("hash changed after a JSON round trip")
	}
	changes := []func(r *Request) string{
		func(r *Request) string { r.Method = "PUT"; return "method" },
		func(r *Request) string { r.URL += "&x=1"; return "url" },
		func(r *Request) string {
			r.Headers = map[string]string{"Authorization": r.Headers["Authorization"]}
			return "headers"
		},
		func(r *Request) string {
			r.Body = bytes.Replace(r.Body, []byte("media_player.tv"), []byte("media_player.kitchen"), 1)
			return "body"
		},
	}
	for _, change := range changes {
		r := haRequest(t)
		what := change(&r)
		if Build(r, "plays").Hash() == a.Hash() {
			t.Errorf("changing the %s did not change the hash", what)
		}
	}
	if Build(req, "pauses").Hash() == a.Hash() {
		t.Error("changing the effect did not change the hash")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
