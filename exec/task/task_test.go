package task

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

const goodManifest = `{"task_id":"t-1","capability_id":"MEDIA_SEEK","inputs":{"target_device":"tv","position_seconds":12},"lease":"a.b.c"}`

func TestParseManifest(t *testing.T) {
	m, err := ParseManifest([]byte(goodManifest))
	if err != nil {
		t.Fatal(err)
	}
	if m.TaskID != "t-1" || m.CapabilityID != "MEDIA_SEEK" || m.Lease != "a.b.c" ||
		string(m.Inputs) != `{"target_device":"tv","position_seconds":12}` {
		t.Fatalf("%+v", m)
	}
	// Key order and spacing do not change the request hash; values do.
	m2, err := ParseManifest([]byte(`{ "lease":"x.y.z", "inputs": {"position_seconds": 12.0, "target_device": "tv"},
		"capability_id": "MEDIA_SEEK", "task_id": "t-1" }`))
	if err != nil {
		t.Fatal(err)
	}
	h1, _ := m.RequestHash()
	h2, _ := m2.RequestHash()
	if h1 != h2 {
		t.Fatalf("request hash depends on spelling: %s vs %s", h1, h2)
	}
	m2.Inputs = json.RawMessage(`{"position_seconds":13,"target_device":"tv"}`)
	if h3, _ := m2.RequestHash(); h3 == h1 {
		t.Fatal("request hash ignores the inputs")
	}
}

func TestParseManifestErrors(t *testing.T) {
	big := strings.Repeat("a", MaxLeaseBytes+1)
	cases := []struct {
		name, doc, want string
		code            Code
	}{
		{"not an object", `[]`, "manifest: must be a JSON object, got an array", ExecutionFailed},
		{"empty", ``, "manifest: not valid JSON: unexpected end of input", ExecutionFailed},
		{"unknown field", `{"task_id":"t","capability_id":"MEDIA_PLAY","inputs":{},"lease":"x","extra":1}`, "manifest: extra: unknown field", ExecutionFailed},
		{"duplicate key", `{"task_id":"t","task_id":"u","capability_id":"MEDIA_PLAY","inputs":{},"lease":"x"}`, "manifest: task_id: duplicate key", ExecutionFailed},
		{"task_id number", `{"task_id":7,"capability_id":"MEDIA_PLAY","inputs":{},"lease":"x"}`, "manifest: task_id: must be a string, got a number", ExecutionFailed},
		{"task_id object", `{"task_id":{"a":[1]},"capability_id":"MEDIA_PLAY","inputs":{},"lease":"x"}`, "manifest: task_id: must be a string, got an object", ExecutionFailed},
		{"task_id null", `{"task_id":null,"capability_id":"MEDIA_PLAY","inputs":{},"lease":"x"}`, "manifest: task_id: must be a string, got null", ExecutionFailed},
		{"task_id path", `{"task_id":"../etc/passwd","capability_id":"MEDIA_PLAY","inputs":{},"lease":"x"}`, "manifest: task_id: must be 1-128 characters", ExecutionFailed},
		{"task_id too long", `{"task_id":"` + strings.Repeat("a", 129) + `","capability_id":"MEDIA_PLAY","inputs":{},"lease":"x"}`, "manifest: task_id: longer than 128", ExecutionFailed},
		{"capability lower", `{"task_id":"t","capability_id":"media_play","inputs":{},"lease":"x"}`, "manifest: capability_id: must be upper-case", ExecutionFailed},
		{"inputs array", `{"task_id":"t","capability_id":"MEDIA_PLAY","inputs":[1],"lease":"x"}`, "manifest: inputs: must be a JSON object, got an array", ExecutionFailed},
		{"inputs dup", `{"task_id":"t","capability_id":"MEDIA_PLAY","inputs":{"a":{"b":1,"b":2}},"lease":"x"}`, "manifest: inputs.a.b: duplicate key", ExecutionFailed},
		{"inputs deep", `{"task_id":"t","capability_id":"MEDIA_PLAY","inputs":{"a":[[[[[[[[1]]]]]]]]},"lease":"x"}`, "nested deeper than 8 levels", ExecutionFailed},
		{"missing lease", `{"task_id":"t","capability_id":"MEDIA_PLAY","inputs":{}}`, "manifest: lease: required", InvalidLease},
		{"lease bool", `{"task_id":"t","capability_id":"MEDIA_PLAY","inputs":{},"lease":true}`, "manifest: lease: must be a string, got a boolean", InvalidLease},
		{"lease too long", `{"task_id":"t","capability_id":"MEDIA_PLAY","inputs":{},"lease":"` + big + `"}`, "manifest: lease: longer than 16384 bytes", InvalidLease},
		{"inputs too big", `{"task_id":"t","capability_id":"MEDIA_PLAY","inputs":{"a":"` + strings.Repeat("b", MaxInputsBytes) + `"},"lease":"x"}`, "manifest: inputs: larger than 65536 bytes", ExecutionFailed},
		{"document too big", `{"task_id":"` + strings.Repeat(" ", MaxManifestBytes) + `"}`, "manifest: larger than 262144 bytes", ExecutionFailed},
		{"trailing data", goodManifest + `{}`, "manifest: unexpected data after the object", ExecutionFailed},
		{"bad utf-8", `{"task_id":"t` + "\xff" + `"}`, "manifest: not valid UTF-8", ExecutionFailed},
		{"truncated", goodManifest[:40], "not valid JSON: unexpected end of input", ExecutionFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseManifest([]byte(c.doc))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			var te *Error
			if !errors.As(err, &te) || te.Code != c.code {
				t.Fatalf("code: got %v, want %s", te, c.code)
			}
		})
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(goodManifest))
	f.Add([]byte(`{"task_id":"t","capability_id":"X","inputs":{"a":[1,{"b":null}]},"lease":"q"}`))
	f.Add([]byte(`{"task_id":"t","task_id":1}`))
	f.Add([]byte(`{"inputs":{"a":{"a":{"a":{}}}}}`))
	f.Add([]byte("\xff{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data)
		if err != nil {
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("error without a code: %v", err)
			}
			return
		}
		// Whatever parses re-encodes to a manifest that parses to the same thing.
		again, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := ParseManifest(again)
		if err != nil {
			t.Fatalf("re-encoded manifest rejected: %v\n%s", err, again)
		}
		if m2.TaskID != m.TaskID || m2.CapabilityID != m.CapabilityID || m2.Lease != m.Lease || !bytes.Equal(m2.Inputs, m.Inputs) {
			t.Fatalf("round trip changed the manifest: %+v vs %+v", m, m2)
		}
		if _, err := m.RequestHash(); err != nil {
			t.Fatalf("accepted inputs cannot be hashed: %v", err)
		}
	})
}

func testSigner(t testing.TB) *Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return NewSigner(priv)
}

func sampleResult() *Result {
	return &Result{TaskID: "t-1", CapabilityID: "MEDIA_PAUSE", Status: StatusSuccess,
		Output:     json.RawMessage(`{"task_id":"t-1","capability_id":"MEDIA_PAUSE","device":"living-room","status":"applied"}`),
		ExecutedAt: "2026-03-01T12:00:00Z", ContentHashBefore: "sha256:aa", ContentHashAfter: "sha256:bb",
		RequestHash: "0123"}
}

// TestSignatureFailsAfterAnyByteChange flips every byte of a stored result
// (two different flips each) and requires verification to fail every time.
func TestSignatureFailsAfterAnyByteChange(t *testing.T) {
	s := testSigner(t)
	for _, r := range []*Result{sampleResult(), {TaskID: "t-2", CapabilityID: "MEDIA_PLAY", Status: StatusFailure,
		Output: json.RawMessage(`{}`), Error: &Error{Code: LeaseExpired, Message: "expiry check failed"},
		ExecutedAt: "2026-03-01T12:00:00Z"}} {
		if err := s.Sign(r); err != nil {
			t.Fatal(err)
		}
		data, err := MarshalResult(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := VerifyBytes(data, s.Public()); err != nil {
			t.Fatalf("untouched result: %v", err)
		}
		for i := range data {
			for _, mask := range []byte{0x01, 0x20} {
				mut := bytes.Clone(data)
				mut[i] ^= mask
				if _, err := VerifyBytes(mut, s.Public()); err == nil {
					t.Fatalf("byte %d (%q ^ %#x) changed and the result still verifies:\n%s", i, data[i], mask, mut)
				}
			}
		}
		other := testSigner(t)
		if _, err := VerifyBytes(data, other.Public()); err == nil || !strings.Contains(err.Error(), "signature.key_id") {
			t.Fatalf("another key must not verify: %v", err)
		}
	}
}

func TestResultShape(t *testing.T) {
	s := testSigner(t)
	r := sampleResult()
	r.Status = "DONE"
	if err := s.Sign(r); err == nil {
		t.Fatal("bad status signed")
	}
	r = sampleResult()
	r.Status, r.Error = StatusFailure, &Error{Code: "TOKEN_INVALID", Message: "x"}
	if err := s.Sign(r); err == nil || !strings.Contains(err.Error(), "error.code") {
		t.Fatalf("code outside the closed set: %v", err)
	}
	if _, err := ParseResult([]byte(`{"task_id":"t","extra":1}`)); err == nil {
		t.Fatal("unknown field accepted")
	}
	if _, err := ParseResult([]byte(`{"task_id":"t","task_id":"u"}`)); err == nil {
		t.Fatal("duplicate key accepted")
	}
	// Keys load from PEM files (PKCS#8 private, PKIX public).
	dir := t.TempDir()
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	privDER, _ := x509.MarshalPKCS8PrivateKey(priv)
	pubDER, _ := x509.MarshalPKIXPublicKey(pub)
	os.WriteFile(dir+"/k.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: privDER}), 0o600)
	os.WriteFile(dir+"/p.pem", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o600)
	ls, err := LoadSigner(dir + "/k.pem")
	if err != nil {
		t.Fatal(err)
	}
	lp, err := LoadPublicKey(dir + "/p.pem")
	if err != nil {
		t.Fatal(err)
	}
	r = sampleResult()
	if err := ls.Sign(r); err != nil {
		t.Fatal(err)
	}
	if err := Verify(r, lp); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPublicKey(dir + "/k.pem"); err == nil {
		t.Fatal("a private key file loaded as a public key")
	}
}

func TestStoreIdempotentUnderConcurrency(t *testing.T) {
	st, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := testSigner(t)
	var runs atomic.Int32
	var wg sync.WaitGroup
	results := make([]*Result, 50)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, _, err := st.Do("t-1", "0123", func() (*Result, error) {
				runs.Add(1)
				r := sampleResult()
				return r, s.Sign(r)
			})
			if err != nil {
				t.Error(err)
			}
			results[i] = r
		}()
	}
	wg.Wait()
	if n := runs.Load(); n != 1 {
		t.Fatalf("ran %d times", n)
	}
	for _, r := range results {
		if r == nil || r.Signature.Value != results[0].Signature.Value {
			t.Fatal("callers got different results")
		}
	}
	_, fresh, err := st.Do("t-1", "0123", func() (*Result, error) { t.Fatal("ran again"); return nil, nil })
	if err != nil || fresh {
		t.Fatalf("repeat: fresh=%v err=%v", fresh, err)
	}
	_, _, err = st.Do("t-1", "other", func() (*Result, error) { t.Fatal("ran with other inputs"); return nil, nil })
	if !errors.Is(err, &Error{Code: ExecutionFailed}) || !strings.Contains(err.Error(), "different inputs") {
		t.Fatalf("different inputs: %v", err)
	}
	if _, _, err := st.Do("../x", "0123", nil); err == nil {
		t.Fatal("path-like task_id accepted")
	}
	if _, err := st.Load("nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("load missing: %v", err)
	}
	data, _ := os.ReadFile(st.Path("t-1"))
	if _, err := VerifyBytes(data, s.Public()); err != nil {
		t.Fatalf("stored result does not verify: %v", err)
	}
}

func BenchmarkSignVerify(b *testing.B) {
	s := testSigner(b)
	for b.Loop() {
		r := sampleResult()
		if err := s.Sign(r); err != nil {
			b.Fatal(err)
		}
		if err := Verify(r, s.Public()); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCheckJSONMasksAKeyBeforeQuotingIt: an error names the agent's key in
// its path; a secret-shaped key is masked whole, long or short, before any
// cut (a key cut first could leave a part no mask recognises).
func TestCheckJSONMasksAKeyBeforeQuotingIt(t *testing.T) {
	short := "ghp_" + strings.Repeat("A1b2C3d4E5", 3) + "f6G7h8"
	long := "github_pat_11ABCDEFG0" + strings.Repeat("aB3dE5gH7jK9", 6)
	for _, key := range []string{short, long} {
		raw := `{"inputs":{"` + key + `":1,"` + key + `":2}}`
		err := CheckJSON([]byte(raw), "manifest", 8)
		if err == nil {
			t.Fatalf("a duplicate key passed")
		}
		if strings.Contains(err.Error(), key[:24]) {
			t.Errorf("the key reached the error: %v", err)
		}
	}
}
