package lease

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/vigil-dev/vigil/internal/atomicfile"
)

// Files `vigil keys init` writes under keys/, and the kid of the local issuer.
const (
	OperatorKeyFile  = "operator.key.pem" // Ed25519, signs task results
	OperatorPubFile  = "operator.pub.pem"
	IssuerKeyFile    = "issuer.key.pem" // Ed25519, signs leases from `vigil lease issue`
	IssuerPubFile    = "issuer.pub.pem"
	LocalIssuerKID   = "local"
	maxKeyFileBytes  = 64 << 10
	defaultJTIBytes  = 16
	MaxIssueTTL      = 24 * time.Hour
	DefaultIssueTTL  = 10 * time.Minute
	issuerFileLabel  = "lease issuer"
	operatorKeyLabel = "operator"
)

// ErrKeyExists is returned when keys would be overwritten without force.
var ErrKeyExists = errors.New("key file already exists")

// KeyPair names the two files of a generated key.
type KeyPair struct {
	Private string `json:"private_key"`
	Public  string `json:"public_key"`
}

// GenerateEd25519 writes a new Ed25519 key pair: PKCS#8 PEM private key
// (0600) and PKIX PEM public key (0644), both atomically. rand is injected
// for tests; nil means crypto/rand. It refuses to overwrite unless force.
func GenerateEd25519(privPath, pubPath string, rand io.Reader, force bool) (KeyPair, error) {
	if !force {
		for _, p := range []string{privPath, pubPath} {
			if _, err := os.Stat(p); err == nil {
				return KeyPair{}, fmt.Errorf("%s: %w (use --force to replace it)", p, ErrKeyExists)
			}
		}
	}
	pub, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return KeyPair{}, err
	}
	privDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return KeyPair{}, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return KeyPair{}, err
	}
	if err := os.MkdirAll(filepath.Dir(privPath), 0o700); err != nil {
		return KeyPair{}, err
	}
	if err := atomicfile.Write(privPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: privDER}), 0o600); err != nil {
		return KeyPair{}, err
	}
	if err := atomicfile.Write(pubPath, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644); err != nil {
		return KeyPair{}, err
	}
	return KeyPair{Private: privPath, Public: pubPath}, nil
}

// InitKeys creates the operator's result-signing key and the local lease
// issuer's key under dir, the files `vigil keys init` promises.
func InitKeys(dir string, rand io.Reader, force bool) (operator, issuer KeyPair, err error) {
	op := KeyPair{filepath.Join(dir, OperatorKeyFile), filepath.Join(dir, OperatorPubFile)}
	is := KeyPair{filepath.Join(dir, IssuerKeyFile), filepath.Join(dir, IssuerPubFile)}
	if !force {
		// Check all four first so a refusal leaves nothing half-made.
		for _, p := range []string{op.Private, op.Public, is.Private, is.Public} {
			if _, err := os.Stat(p); err == nil {
				return KeyPair{}, KeyPair{}, fmt.Errorf("%s: %w (use --force to replace the keys)", p, ErrKeyExists)
			}
		}
	}
	if operator, err = GenerateEd25519(op.Private, op.Public, rand, true); err != nil {
		return KeyPair{}, KeyPair{}, fmt.Errorf("%s key: %w", operatorKeyLabel, err)
	}
	if issuer, err = GenerateEd25519(is.Private, is.Public, rand, true); err != nil {
		return KeyPair{}, KeyPair{}, fmt.Errorf("%s key: %w", issuerFileLabel, err)
	}
	return operator, issuer, nil
}

func readPEM(path, wantType string) (*pem.Block, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxKeyFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxKeyFileBytes)
	}
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, fmt.Errorf("%s: no PEM %q block", path, wantType)
		}
		if block.Type == wantType || wantType == "PUBLIC KEY" && block.Type == "RSA PUBLIC KEY" ||
			wantType == "PRIVATE KEY" && block.Type == "RSA PRIVATE KEY" {
			return block, nil
		}
	}
}

// LoadPublicKey reads an Ed25519 or RSA public key from a PEM file (PKIX
// "PUBLIC KEY", as openssl and `vigil keys init` write, or PKCS#1 "RSA PUBLIC KEY").
func LoadPublicKey(path string) (crypto.PublicKey, error) {
	block, err := readPEM(path, "PUBLIC KEY")
	if err != nil {
		return nil, err
	}
	if block.Type == "RSA PUBLIC KEY" {
		return x509.ParsePKCS1PublicKey(block.Bytes)
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch k.(type) {
	case ed25519.PublicKey, *rsa.PublicKey:
		return k, nil
	}
	return nil, fmt.Errorf("%s: unsupported key type %T (Ed25519 or RSA only)", path, k)
}

// LoadPrivateKey reads an Ed25519 or RSA private key from a PEM file (PKCS#8,
// or PKCS#1 for RSA) and returns it with the JWT algorithm it signs with.
func LoadPrivateKey(path string) (crypto.Signer, string, error) {
	block, err := readPEM(path, "PRIVATE KEY")
	if err != nil {
		return nil, "", err
	}
	var k any
	if block.Type == "RSA PRIVATE KEY" {
		k, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	} else {
		k, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	switch key := k.(type) {
	case ed25519.PrivateKey:
		return key, AlgEdDSA, nil
	case *rsa.PrivateKey:
		return key, AlgRS256, nil
	}
	return nil, "", fmt.Errorf("%s: unsupported key type %T (Ed25519 or RSA only)", path, k)
}

// IssueOptions describe a lease to issue.
type IssueOptions struct {
	Issuer   string // default DefaultIssuer
	Audience string // default DefaultAudience
	KID      string // default LocalIssuerKID
	Subject  string // the agent id
	TaskID   string
	Caps     []string
	Devices  []string      // constraints.devices; empty means none
	TTL      time.Duration // default DefaultIssueTTL, at most MaxIssueTTL
	Now      func() time.Time
	Rand     io.Reader // for the jti; nil means crypto/rand
	JTI      string    // set to fix the jti (tests); otherwise random
}

// Issue signs a lease with key (Ed25519 → EdDSA, RSA → RS256).
func Issue(key crypto.Signer, o IssueOptions) (string, error) {
	if o.Issuer == "" {
		o.Issuer = DefaultIssuer
	}
	if o.Audience == "" {
		o.Audience = DefaultAudience
	}
	if o.KID == "" {
		o.KID = LocalIssuerKID
	}
	if o.TTL == 0 {
		o.TTL = DefaultIssueTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	switch {
	case o.Subject == "":
		return "", errors.New("--sub: required (the agent id)")
	case o.TaskID == "":
		return "", errors.New("--task-id: required")
	case len(o.Caps) == 0:
		return "", errors.New("--cap: at least one capability is required")
	case o.TTL < 0 || o.TTL > MaxIssueTTL:
		return "", fmt.Errorf("--ttl: must be between 1s and %s, got %s", MaxIssueTTL, o.TTL)
	}
	if o.JTI == "" {
		b := make([]byte, defaultJTIBytes)
		if o.Rand == nil {
			o.Rand = cryptoRand
		}
		if _, err := io.ReadFull(o.Rand, b); err != nil {
			return "", err
		}
		o.JTI = hex.EncodeToString(b)
	}
	var method jwt.SigningMethod
	switch key.(type) {
	case ed25519.PrivateKey:
		method = jwt.SigningMethodEdDSA
	case *rsa.PrivateKey:
		method = jwt.SigningMethodRS256
	default:
		return "", fmt.Errorf("unsupported signing key %T", key)
	}
	now := o.Now().UTC().Truncate(time.Second)
	c := Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer: o.Issuer, Subject: o.Subject, Audience: jwt.ClaimStrings{o.Audience},
			ExpiresAt: jwt.NewNumericDate(now.Add(o.TTL)), NotBefore: jwt.NewNumericDate(now),
			IssuedAt: jwt.NewNumericDate(now), ID: o.JTI,
		},
		TaskID: o.TaskID, Caps: o.Caps,
	}
	if len(o.Devices) > 0 {
		c.Constraints = &Constraints{Devices: o.Devices}
	}
	t := jwt.NewWithClaims(method, c)
	t.Header["kid"] = o.KID
	return t.SignedString(key)
}

var cryptoRand io.Reader = rand.Reader

// LocalIssuer returns the key `vigil keys init` made for `vigil lease issue`
// as a trusted Key (kid "local", EdDSA), or ok=false when it does not exist.
// Whether to trust it is the caller's choice: a config that lists its own
// [[leases.keys]] may not want the local issuer.
func LocalIssuer(keysDir string) (k Key, ok bool, err error) {
	path := filepath.Join(keysDir, IssuerPubFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return Key{}, false, nil
	}
	pub, err := LoadPublicKey(path)
	if err != nil {
		return Key{}, false, err
	}
	if _, isEd := pub.(ed25519.PublicKey); !isEd {
		return Key{}, false, fmt.Errorf("%s: the local issuer key must be Ed25519", path)
	}
	return Key{KID: LocalIssuerKID, Alg: AlgEdDSA, Public: pub}, true, nil
}
