package task

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/gowebpki/jcs"
)

// Result statuses of CLI.md.
const (
	StatusSuccess = "SUCCESS"
	StatusFailure = "FAILURE"
)

// SignatureAlg is the only signature algorithm results use.
const SignatureAlg = "Ed25519"

// MaxResultBytes bounds a result file read for verification.
const MaxResultBytes = 1 << 20

// signingDomain separates result signatures from anything else the operator
// key might ever sign: the signed bytes are this prefix plus the RFC 8785
// canonical JSON of the result without its signature.
const signingDomain = "vigil-result-v1\n"

// Result is a task's outcome in the shape of CLI.md. Every field except the
// signature is signed, so task_id, capability_id, status and output (the
// seed's minimum) are bound, and so are the error, the time and the hashes.
type Result struct {
	TaskID       string          `json:"task_id"`
	CapabilityID string          `json:"capability_id"`
	Status       string          `json:"status"`
	Output       json.RawMessage `json:"output"`
	Error        *Error          `json:"error,omitempty"`
	ExecutedAt   string          `json:"executed_at"`
	// Hashes of the device state read before and after the action
	// ("sha256:<hex>"), for the audit trail.
	ContentHashBefore string `json:"content_hash_before,omitempty"`
	ContentHashAfter  string `json:"content_hash_after,omitempty"`
	// RequestHash is Manifest.RequestHash: it binds the result to the inputs
	// it answered, so a reused task_id with other inputs is caught.
	RequestHash string     `json:"request_hash,omitempty"`
	Signature   *Signature `json:"signature,omitempty"`
}

// Signature is a result's detached Ed25519 signature.
type Signature struct {
	Alg   string `json:"alg"`
	KeyID string `json:"key_id"`
	Value string `json:"value"` // standard base64 with padding
}

// sigEncoding refuses non-zero padding bits, so two spellings of one
// signature cannot both verify.
var sigEncoding = base64.StdEncoding.Strict()

// FormatTime is how executed_at is written: RFC 3339, UTC, whole seconds.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// KeyID names an Ed25519 public key: "ed25519:" and the first 16 hex digits
// of the SHA-256 of its raw bytes.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return "ed25519:" + hex.EncodeToString(sum[:8])
}

// SigningBytes returns exactly what the signature covers.
func SigningBytes(r *Result) ([]byte, error) {
	c := *r
	c.Signature = nil
	if len(c.Output) == 0 {
		c.Output = json.RawMessage("{}")
	}
	raw, err := marshal(&c, false)
	if err != nil {
		return nil, err
	}
	canon, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("result: canonical JSON: %w", err)
	}
	return append([]byte(signingDomain), canon...), nil
}

// Signer signs results with the operator's Ed25519 key.
type Signer struct {
	key   ed25519.PrivateKey
	keyID string
}

// NewSigner wraps an Ed25519 private key.
func NewSigner(key ed25519.PrivateKey) *Signer {
	pub := key.Public().(ed25519.PublicKey)
	return &Signer{key: key, keyID: KeyID(pub)}
}

// LoadSigner reads a PKCS#8 PEM Ed25519 private key (as `vigil keys init`
// and `openssl genpkey -algorithm ed25519` write).
func LoadSigner(path string) (*Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("signing key %s: not a PEM \"PRIVATE KEY\" block", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("signing key %s: not an Ed25519 key (%T)", path, k)
	}
	return NewSigner(ek), nil
}

// LoadPublicKey reads a PKIX PEM Ed25519 public key.
func LoadPublicKey(path string) (ed25519.PublicKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, fmt.Errorf("public key %s: not a PEM \"PUBLIC KEY\" block", path)
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("public key %s: %w", path, err)
	}
	ek, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("public key %s: not an Ed25519 key (%T)", path, k)
	}
	return ek, nil
}

// Public is the verifying key.
func (s *Signer) Public() ed25519.PublicKey { return s.key.Public().(ed25519.PublicKey) }

// KeyID is the id written into signatures.
func (s *Signer) KeyID() string { return s.keyID }

// Sign checks r's shape and sets its signature.
func (s *Signer) Sign(r *Result) error {
	if err := r.Validate(); err != nil {
		return err
	}
	msg, err := SigningBytes(r)
	if err != nil {
		return err
	}
	r.Signature = &Signature{Alg: SignatureAlg, KeyID: s.keyID,
		Value: sigEncoding.EncodeToString(ed25519.Sign(s.key, msg))}
	return nil
}

// ErrBadSignature is returned (wrapped) when a result does not verify.
var ErrBadSignature = errors.New("result signature does not verify")

// Verify checks r's shape and its signature against pub.
func Verify(r *Result, pub ed25519.PublicKey) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if r.Signature == nil {
		return fmt.Errorf("signature: required: %w", ErrBadSignature)
	}
	if r.Signature.Alg != SignatureAlg {
		return fmt.Errorf("signature.alg: must be %q, got %q: %w", SignatureAlg, r.Signature.Alg, ErrBadSignature)
	}
	if want := KeyID(pub); r.Signature.KeyID != want {
		return fmt.Errorf("signature.key_id: signed by %q, the operator key is %q: %w", r.Signature.KeyID, want, ErrBadSignature)
	}
	sig, err := sigEncoding.DecodeString(r.Signature.Value)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return fmt.Errorf("signature.value: not a base64 Ed25519 signature: %w", ErrBadSignature)
	}
	msg, err := SigningBytes(r)
	if err != nil {
		return err
	}
	if !ed25519.Verify(pub, msg, sig) {
		return fmt.Errorf("signature.value: does not match the result's content: %w", ErrBadSignature)
	}
	return nil
}

// VerifyBytes parses a result file strictly and verifies it.
func VerifyBytes(data []byte, pub ed25519.PublicKey) (*Result, error) {
	r, err := ParseResult(data)
	if err != nil {
		return nil, err
	}
	return r, Verify(r, pub)
}

// Validate checks the result's shape: the closed status and code sets, an
// output object, an error exactly when the task failed.
func (r *Result) Validate() error {
	if err := ValidateTaskID(r.TaskID); err != nil {
		return fmt.Errorf("result: %w", err)
	}
	if err := validateCapabilityID(r.CapabilityID); err != nil {
		return fmt.Errorf("result: %w", err)
	}
	switch r.Status {
	case StatusSuccess:
		if r.Error != nil {
			return errors.New("result: error: must be absent when status is SUCCESS")
		}
	case StatusFailure:
		if r.Error == nil {
			return errors.New("result: error: required when status is FAILURE")
		}
		if !slices.Contains(Codes, r.Error.Code) {
			return fmt.Errorf("result: error.code: %q is not one of the closed failure codes", r.Error.Code)
		}
	default:
		return fmt.Errorf("result: status: must be SUCCESS or FAILURE, got %q", r.Status)
	}
	if out := bytes.TrimSpace(r.Output); len(r.Output) > 0 && (len(out) == 0 || out[0] != '{') {
		return errors.New("result: output: must be a JSON object")
	}
	if _, err := time.Parse(time.RFC3339, r.ExecutedAt); err != nil {
		return fmt.Errorf("result: executed_at: must be RFC 3339, got %q", r.ExecutedAt)
	}
	return nil
}

// ParseResult decodes a result strictly: no unknown or duplicate keys, no
// trailing data.
func ParseResult(data []byte) (*Result, error) {
	if len(data) > MaxResultBytes {
		return nil, fmt.Errorf("result: larger than %d bytes", MaxResultBytes)
	}
	if err := CheckJSON(data, "result", 16); err != nil {
		return nil, err
	}
	// encoding/json matches field names case-insensitively; a signed
	// result must be read one way only, so the keys are checked exactly.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("result: %v", err)
	}
	if err := exactKeys("result", top, resultKeys); err != nil {
		return nil, err
	}
	for name, allowed := range map[string][]string{"error": {"code", "message"}, "signature": {"alg", "key_id", "value"}} {
		raw, ok := top[name]
		if !ok || string(raw) == "null" {
			continue
		}
		var sub map[string]json.RawMessage
		if err := json.Unmarshal(raw, &sub); err != nil {
			return nil, fmt.Errorf("result: %s: %v", name, err)
		}
		if err := exactKeys("result."+name, sub, allowed); err != nil {
			return nil, err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Result
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("result: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("result: unexpected data after the object")
	}
	return &r, nil
}

var resultKeys = []string{"task_id", "capability_id", "status", "output", "error", "executed_at",
	"content_hash_before", "content_hash_after", "request_hash", "signature"}

func exactKeys(path string, m map[string]json.RawMessage, allowed []string) error {
	for k := range m {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("%s.%s: unknown field", path, fieldName(k))
		}
	}
	return nil
}

// MarshalResult writes a result as indented JSON with a trailing newline,
// the form stored in results/ and printed by the CLI.
func MarshalResult(r *Result) ([]byte, error) { return marshal(r, true) }

func marshal(v any, indent bool) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if !indent {
		return bytes.TrimRight(buf.Bytes(), "\n"), nil
	}
	return buf.Bytes(), nil
}
