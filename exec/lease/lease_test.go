package lease

import (
	"crypto"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/internal/atomicfile"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type keys struct {
	ed     ed25519.PrivateKey
	rsa    *rsa.PrivateKey
	rsaPub []byte // PEM of the RSA public key, as it sits in the config
}

var (
	testKeysOnce sync.Once
	testKeys     keys
)

func getKeys(t *testing.T) keys {
	t.Helper()
	testKeysOnce.Do(func() {
		_, ed, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			panic(err)
		}
		rk, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		der, _ := x509.MarshalPKIXPublicKey(&rk.PublicKey)
		testKeys = keys{ed: ed, rsa: rk, rsaPub: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})}
	})
	return testKeys
}

func newVerifier(t *testing.T, k keys, revoked string) *Verifier {
	t.Helper()
	v, err := NewVerifier(Options{
		Keys: []Key{
			{KID: "ed-1", Alg: AlgEdDSA, Public: k.ed.Public()},
			{KID: "rsa-1", Alg: AlgRS256, Public: &k.rsa.PublicKey},
		},
		RevokedPath: revoked,
		Now:         func() time.Time { return t0 },
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func issue(t *testing.T, key crypto.Signer, kid string, mod func(*IssueOptions)) string {
	t.Helper()
	o := IssueOptions{KID: kid, Subject: "agent-7", TaskID: "task-1", Caps: []string{"MEDIA_PLAY", "MEDIA_PAUSE"},
		Devices: []string{"living-room"}, TTL: 10 * time.Minute, Now: func() time.Time { return t0 }, JTI: "jti-1"}
	if mod != nil {
		mod(&o)
	}
	tok, err := Issue(key, o)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

var req = Request{TaskID: "task-1", CapabilityID: "MEDIA_PLAY", Device: "living-room"}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// forge builds a token from raw header and claims JSON and a signature function.
func forge(header, claims string, sign func(string) []byte) string {
	in := b64([]byte(header)) + "." + b64([]byte(claims))
	return in + "." + b64(sign(in))
}

func claimsJSON(mod func(map[string]any)) string {
	c := map[string]any{"iss": DefaultIssuer, "aud": []string{DefaultAudience}, "sub": "agent-7", "jti": "jti-1",
		"exp": t0.Add(10 * time.Minute).Unix(), "nbf": t0.Unix(), "iat": t0.Unix(),
		"task_id": "task-1", "caps": []string{"MEDIA_PLAY"}}
	if mod != nil {
		mod(c)
	}
	b, _ := json.Marshal(c)
	return string(b)
}

func TestValidLeases(t *testing.T) {
	k := getKeys(t)
	v := newVerifier(t, k, "")
	for name, tok := range map[string]string{
		"EdDSA": issue(t, k.ed, "ed-1", nil),
		"RS256": issue(t, k.rsa, "rsa-1", nil),
	} {
		c, err := v.Check(tok, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.Subject != "agent-7" || c.ID != "jti-1" || c.TaskID != "task-1" {
			t.Fatalf("%s: claims %+v", name, c)
		}
	}
}

// TestAttackMatrix is the lease attack matrix of issue 6: each forged or
// unfit token fails with its code and a message naming the failed check.
func TestAttackMatrix(t *testing.T) {
	k := getKeys(t)
	dir := t.TempDir()
	revoked := filepath.Join(dir, "revoked.txt")
	if err := os.WriteFile(revoked, []byte("# revoked leases\nrevoked-jti\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	v := newVerifier(t, k, revoked)
	good := issue(t, k.ed, "ed-1", nil)
	parts := strings.Split(good, ".")
	edSign := func(in string) []byte { return ed25519.Sign(k.ed, []byte(in)) }

	flipSig := func() string {
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		sig[10] ^= 0x01
		return parts[0] + "." + parts[1] + "." + b64(sig)
	}()
	editedPayload := func() string {
		raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
		edited := strings.Replace(string(raw), `"MEDIA_PLAY"`, `"MEDIA_STOP"`, 1)
		return parts[0] + "." + b64([]byte(edited)) + "." + parts[2]
	}()
	hsConfusion := forge(`{"alg":"HS256","typ":"JWT","kid":"rsa-1"}`, claimsJSON(nil), func(in string) []byte {
		m := hmac.New(sha256.New, k.rsaPub)
		m.Write([]byte(in))
		return m.Sum(nil)
	})
	algNone := b64([]byte(`{"alg":"none","typ":"JWT","kid":"ed-1"}`)) + "." + b64([]byte(claimsJSON(nil))) + "."
	huge := forge(`{"alg":"EdDSA","kid":"ed-1"}`, claimsJSON(func(c map[string]any) {
		c["pad"] = strings.Repeat("A", 100<<10)
	}), edSign)

	cases := []struct {
		name  string
		token string
		req   Request
		code  task.Code
		want  string
	}{
		{"alg none", algNone, req, task.InvalidLease, "signature check failed"},
		{"HS256 with the RSA public key as secret", hsConfusion, req, task.InvalidLease, "signing method HS256 is invalid"},
		{"unknown kid", issue(t, k.ed, "nobody", nil), req, task.InvalidLease, `unknown kid "nobody"`},
		{"kid of an RSA key on an EdDSA token", forge(`{"alg":"EdDSA","kid":"rsa-1"}`, claimsJSON(nil), edSign), req, task.InvalidLease, "is an RS256 key"},
		{"no kid", forge(`{"alg":"EdDSA"}`, claimsJSON(nil), edSign), req, task.InvalidLease, "no kid"},
		{"expired", issue(t, k.ed, "ed-1", func(o *IssueOptions) {
			o.Now = func() time.Time { return t0.Add(-time.Hour) }
		}), req, task.LeaseExpired, "expiry check failed: the lease expired at 2026-03-01T11:10:00Z"},
		{"expired beyond leeway by 1s", forge(`{"alg":"EdDSA","kid":"ed-1"}`, claimsJSON(func(c map[string]any) {
			c["exp"] = t0.Add(-31 * time.Second).Unix()
		}), edSign), req, task.LeaseExpired, "expiry check failed"},
		{"nbf in the future", issue(t, k.ed, "ed-1", func(o *IssueOptions) {
			o.Now = func() time.Time { return t0.Add(time.Hour) }
		}), req, task.InvalidLease, "expiry check failed: the lease is not valid before 2026-03-01T13:00:00Z (nbf)"},
		{"no exp", forge(`{"alg":"EdDSA","kid":"ed-1"}`, claimsJSON(func(c map[string]any) { delete(c, "exp") }), edSign),
			req, task.InvalidLease, "expiry check failed: exp is required"},
		{"wrong iss", issue(t, k.ed, "ed-1", func(o *IssueOptions) { o.Issuer = "evil-authority" }), req, task.InvalidLease,
			`signature check failed: iss is "evil-authority", expected "abos-policy-authority"`},
		{"wrong aud", issue(t, k.ed, "ed-1", func(o *IssueOptions) { o.Audience = "someone-else" }), req, task.InvalidLease,
			`signature check failed: aud [someone-else] does not include "abos-executor"`},
		{"task_id mismatch", issue(t, k.ed, "ed-1", func(o *IssueOptions) { o.TaskID = "task-2" }), req, task.InvalidLease,
			`task_id check failed: the lease is for task "task-2", the manifest is task "task-1"`},
		{"revoked jti", issue(t, k.ed, "ed-1", func(o *IssueOptions) { o.JTI = "revoked-jti" }), req, task.InvalidLease, "revoked"},
		{"capability not in caps", good, Request{TaskID: "task-1", CapabilityID: "MEDIA_SEEK", Device: "living-room"},
			task.UnsupportedCapability, "capability check failed: MEDIA_SEEK is not in the lease's caps"},
		{"device outside constraints.devices", good, Request{TaskID: "task-1", CapabilityID: "MEDIA_PLAY", Device: "kitchen"},
			task.InvalidLease, `capability check failed: device "kitchen" is not in the lease's constraints.devices`},
		{"flipped signature byte", flipSig, req, task.InvalidLease, "signature check failed: bad signature"},
		{"payload edited after signing", editedPayload, req, task.InvalidLease, "signature check failed: bad signature"},
		{"garbage", "this is not a token", req, task.InvalidLease, "signature check failed: malformed token"},
		{"garbage with dots", "a.b.c", req, task.InvalidLease, "signature check failed: malformed token"},
		{"empty", "", req, task.InvalidLease, "token is empty"},
		{"100 KB token", huge, req, task.InvalidLease, "token is larger than 16384 bytes"},
		{"ES256 header", forge(`{"alg":"ES256","kid":"ed-1"}`, claimsJSON(nil), edSign), req, task.InvalidLease, "signing method ES256 is invalid"},
		{"no jti", forge(`{"alg":"EdDSA","kid":"ed-1"}`, claimsJSON(func(c map[string]any) { delete(c, "jti") }), edSign),
			req, task.InvalidLease, "jti is required"},
		{"caps of the wrong type", forge(`{"alg":"EdDSA","kid":"ed-1"}`, claimsJSON(func(c map[string]any) { c["caps"] = "MEDIA_PLAY" }), edSign),
			req, task.InvalidLease, "malformed token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := v.Check(c.token, c.req)
			var te *task.Error
			if !errors.As(err, &te) {
				t.Fatalf("want a *task.Error %s, got %v", c.code, err)
			}
			if te.Code != c.code || !strings.Contains(te.Message, c.want) {
				t.Fatalf("got %s: %q; want %s containing %q", te.Code, te.Message, c.code, c.want)
			}
			if c.name == "revoked jti" && te.Error() != "INVALID_LEASE: revoked" {
				t.Fatalf("revoked lease error is %q", te.Error())
			}
		})
	}
}

// TestCheckOrder: a token failing several checks reports the first in the
// seeds' order — signature, task_id, expiry, capability.
func TestCheckOrder(t *testing.T) {
	k := getKeys(t)
	v := newVerifier(t, k, "")
	expiredOtherTask := issue(t, k.ed, "ed-1", func(o *IssueOptions) {
		o.TaskID, o.Now = "task-9", func() time.Time { return t0.Add(-time.Hour) }
	})
	_, err := v.Check(expiredOtherTask, Request{TaskID: "task-1", CapabilityID: "NOPE"})
	if !strings.Contains(err.Error(), "task_id check failed") {
		t.Fatalf("task_id must be checked before expiry: %v", err)
	}
	expiredWrongCap := issue(t, k.ed, "ed-1", func(o *IssueOptions) { o.Now = func() time.Time { return t0.Add(-time.Hour) } })
	_, err = v.Check(expiredWrongCap, Request{TaskID: "task-1", CapabilityID: "NOPE"})
	if !errors.Is(err, &task.Error{Code: task.LeaseExpired}) {
		t.Fatalf("expiry must be checked before capability: %v", err)
	}
	badSigOtherTask := issue(t, k.ed, "nobody", func(o *IssueOptions) { o.TaskID = "task-9" })
	_, err = v.Check(badSigOtherTask, req)
	if !strings.Contains(err.Error(), "signature check failed") {
		t.Fatalf("signature must be checked first: %v", err)
	}
}

func TestLeeway(t *testing.T) {
	k := getKeys(t)
	v := newVerifier(t, k, "")
	within := forge(`{"alg":"EdDSA","kid":"ed-1"}`, claimsJSON(func(c map[string]any) {
		c["exp"] = t0.Add(-29 * time.Second).Unix()
		c["nbf"] = t0.Add(29 * time.Second).Unix()
	}), func(in string) []byte { return ed25519.Sign(k.ed, []byte(in)) })
	if _, err := v.Check(within, req); err != nil {
		t.Fatalf("within the 30 s leeway: %v", err)
	}
}

// TestRevocationReload: a jti added to the list (by anyone, any time) is
// refused on the next check without restarting.
func TestRevocationReload(t *testing.T) {
	k := getKeys(t)
	path := filepath.Join(t.TempDir(), "revoked.txt")
	v := newVerifier(t, k, path)
	tok := issue(t, k.ed, "ed-1", nil)
	if _, err := v.Check(tok, req); err != nil {
		t.Fatalf("no list yet: %v", err)
	}
	if err := atomicfile.Write(path, []byte("other\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Check(tok, req); err != nil {
		t.Fatalf("jti-1 not revoked yet: %v", err)
	}
	// Append in place (same inode), as `echo jti >> revoked.txt` does.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("jti-1\n")
	f.Close()
	if _, err := v.Check(tok, req); err == nil || err.Error() != "INVALID_LEASE: revoked" {
		t.Fatalf("after revoking: %v", err)
	}
	// And un-revoked by rewriting the file.
	if err := atomicfile.Write(path, []byte("other\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Check(tok, req); err != nil {
		t.Fatalf("after un-revoking: %v", err)
	}
	// An unreadable list fails closed (root reads anything, so only as a user).
	if os.Geteuid() != 0 {
		if err := os.Chmod(path, 0); err != nil {
			t.Fatal(err)
		}
		_, err := v.Check(tok, req)
		if err == nil || !strings.Contains(err.Error(), "revocation list unreadable") {
			t.Fatalf("unreadable list must fail closed: %v", err)
		}
	}
}

func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required in CI: %v", name, err)
		}
		t.Skipf("%s not installed", name)
	}
	return p
}

func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return out
}

// TestOpenSSLKeys: keys made by the openssl command, and tokens whose
// signature openssl itself computed, verify; the same key under a wrong
// kid does not.
func TestOpenSSLKeys(t *testing.T) {
	requireTool(t, "openssl")
	dir := t.TempDir()
	rsaKey, rsaPub := filepath.Join(dir, "rsa.pem"), filepath.Join(dir, "rsa.pub.pem")
	edKey, edPub := filepath.Join(dir, "ed.pem"), filepath.Join(dir, "ed.pub.pem")
	run(t, "openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", rsaKey)
	run(t, "openssl", "pkey", "-in", rsaKey, "-pubout", "-out", rsaPub)
	run(t, "openssl", "genpkey", "-algorithm", "ed25519", "-out", edKey)
	run(t, "openssl", "pkey", "-in", edKey, "-pubout", "-out", edPub)

	var trusted []Key
	for _, k := range []struct{ kid, alg, pub string }{{"osl-rsa", AlgRS256, rsaPub}, {"osl-ed", AlgEdDSA, edPub}} {
		pub, err := LoadPublicKey(k.pub)
		if err != nil {
			t.Fatal(err)
		}
		trusted = append(trusted, Key{KID: k.kid, Alg: k.alg, Public: pub})
	}
	v, err := NewVerifier(Options{Keys: trusted, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}

	// Signed by Go with the openssl-made private keys.
	for _, k := range []struct{ kid, path, alg string }{{"osl-rsa", rsaKey, AlgRS256}, {"osl-ed", edKey, AlgEdDSA}} {
		priv, alg, err := LoadPrivateKey(k.path)
		if err != nil {
			t.Fatal(err)
		}
		if alg != k.alg {
			t.Fatalf("%s: alg %s", k.path, alg)
		}
		if _, err := v.Check(issue(t, priv, k.kid, nil), req); err != nil {
			t.Fatalf("%s signed by Go: %v", k.kid, err)
		}
	}

	// Signed by openssl itself.
	opensslSign := func(header, keyPath string, args ...string) string {
		in := b64([]byte(header)) + "." + b64([]byte(claimsJSON(nil)))
		inFile := filepath.Join(dir, "signing-input")
		if err := os.WriteFile(inFile, []byte(in), 0o600); err != nil {
			t.Fatal(err)
		}
		sig := run(t, "openssl", append(args, "-inkey", keyPath, "-in", inFile)...)
		return in + "." + b64(sig)
	}
	rs := opensslSign(`{"alg":"RS256","typ":"JWT","kid":"osl-rsa"}`, rsaKey, "pkeyutl", "-sign", "-rawin", "-digest", "sha256")
	if _, err := v.Check(rs, req); err != nil {
		t.Fatalf("RS256 signed by openssl: %v", err)
	}
	ed := opensslSign(`{"alg":"EdDSA","typ":"JWT","kid":"osl-ed"}`, edKey, "pkeyutl", "-sign", "-rawin")
	if _, err := v.Check(ed, req); err != nil {
		t.Fatalf("EdDSA signed by openssl: %v", err)
	}
	wrongKid := opensslSign(`{"alg":"EdDSA","typ":"JWT","kid":"osl-rsa"}`, edKey, "pkeyutl", "-sign", "-rawin")
	if _, err := v.Check(wrongKid, req); err == nil {
		t.Fatal("an EdDSA token naming the RSA kid must fail")
	}
}

func TestNewVerifierRejectsBadKeys(t *testing.T) {
	k := getKeys(t)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	for name, keys := range map[string][]Key{
		"HS256 alg":      {{KID: "a", Alg: "HS256", Public: k.ed.Public()}},
		"alg/key clash":  {{KID: "a", Alg: AlgRS256, Public: k.ed.Public()}},
		"small RSA":      {{KID: "a", Alg: AlgRS256, Public: &small.PublicKey}},
		"no kid":         {{Alg: AlgEdDSA, Public: k.ed.Public()}},
		"duplicated kid": {{KID: "a", Alg: AlgEdDSA, Public: k.ed.Public()}, {KID: "a", Alg: AlgEdDSA, Public: k.ed.Public()}},
	} {
		if _, err := NewVerifier(Options{Keys: keys}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestInitKeysAndLocalIssuer(t *testing.T) {
	dir := t.TempDir()
	op, is, err := InitKeys(dir, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(op.Private); fi.Mode().Perm() != 0o600 {
		t.Fatalf("private key mode %v", fi.Mode())
	}
	if _, _, err := InitKeys(dir, nil, false); !errors.Is(err, ErrKeyExists) {
		t.Fatalf("second init must refuse: %v", err)
	}
	key, ok, err := LocalIssuer(dir)
	if err != nil || !ok {
		t.Fatalf("local issuer: %v %v", ok, err)
	}
	v, err := NewVerifier(Options{Keys: []Key{key}, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	priv, _, err := LoadPrivateKey(is.Private)
	if err != nil {
		t.Fatal(err)
	}
	tok := issue(t, priv, LocalIssuerKID, nil)
	if _, err := v.Check(tok, req); err != nil {
		t.Fatal(err)
	}
	if _, err := Issue(priv, IssueOptions{Subject: "a", TaskID: "t"}); err == nil || !strings.Contains(err.Error(), "--cap") {
		t.Fatalf("issue without caps: %v", err)
	}
}

func BenchmarkCheckEdDSA(b *testing.B) {
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	v, _ := NewVerifier(Options{Keys: []Key{{KID: "k", Alg: AlgEdDSA, Public: ed.Public()}}, Now: func() time.Time { return t0 }})
	tok, _ := Issue(ed, IssueOptions{KID: "k", Subject: "a", TaskID: "task-1", Caps: []string{"MEDIA_PLAY"},
		Now: func() time.Time { return t0 }, JTI: "j"})
	b.ResetTimer()
	for b.Loop() {
		if _, err := v.Check(tok, req); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLastLineMasksBeforeItCuts: a key straddling the 200-byte cut of an
// error line is masked whole first, so no part of it is shown.
func TestLastLineMasksBeforeItCuts(t *testing.T) {
	key := "sk-proj-" + strings.Repeat("Ab3De5Gh7J", 5)
	msg := "token is malformed: could not decode " + strings.Repeat("x", 145) + " near " + key + " end"
	got := lastLine(errors.New("first line\n" + msg))
	if strings.Contains(got, key[:12]) {
		t.Fatalf("part of the key reached the message: %q", got)
	}
	if strings.Contains(got, "first line") {
		t.Fatalf("not the last line: %q", got)
	}
}
