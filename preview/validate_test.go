package preview

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	ok := Request{Method: "POST", URL: "https://h/x", Headers: map[string]string{"Content-Type": "application/json"}, ContentType: "application/json"}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		mod  func(r *Request)
		want string
	}{
		{func(r *Request) { r.Method = "" }, "method: must be an HTTP token"},
		{func(r *Request) { r.Method = "PO ST" }, "method: must be an HTTP token"},
		{func(r *Request) { r.URL = "" }, "url: must not be empty"},
		{func(r *Request) { r.URL = "https://bob:hunter22@h/x y" }, `url: must not contain whitespace, got "https://bob:********@h/x y"`},
		{func(r *Request) { r.Headers = map[string]string{"Bad Name": "v"} }, "headers: name"},
		{func(r *Request) { r.Headers = map[string]string{"X-A": "v\r\nInjected: 1"} }, "headers.X-A: must not contain CR, LF or NUL"},
		{func(r *Request) { r.ContentType = "///" }, "content_type: must be a media type"},
	}
	for _, c := range bad {
		r := ok
		c.mod(&r)
		err := r.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
		if strings.Contains(err.Error(), "hunter22") {
			t.Errorf("error leaks a secret: %v", err)
		}
	}
}

func TestFingerprint(t *testing.T) {
	key := []byte("per-install-key")
	a := Request{Method: "POST", URL: "https://h/x", Body: []byte(`{"password":"one-password"}`), ContentType: "application/json"}
	b := a
	b.Body = []byte(`{"password":"two-password"}`)
	if Build(a, "").Hash() != Build(b, "").Hash() {
		t.Fatal("masked previews should be equal")
	}
	if a.Fingerprint(key) == b.Fingerprint(key) {
		t.Fatal("fingerprint missed a change under the mask")
	}
	if first, again := a.Fingerprint(key), a.Fingerprint(key); first != again || first == a.Fingerprint([]byte("other")) {
		t.Fatal("fingerprint not deterministic or not keyed")
	}
}
