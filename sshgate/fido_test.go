package sshgate

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/vigil-dev/vigil/internal/testwait"
)

// skSigner is a FIDO security key (sk-ssh-ed25519@openssh.com) in
// software, signing as openssh/PROTOCOL.u2f says a token does: over the
// application's and the data's SHA-256, the flags byte and a counter. Its
// flags say whether the person touched it (0x01, user presence).
type skSigner struct {
	priv  ed25519.PrivateKey
	pub   gossh.PublicKey
	flags byte
}

func newSKSigner(t *testing.T, flags byte) *skSigner {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	wire := gossh.Marshal(struct {
		Name, Key, App string
	}{gossh.KeyAlgoSKED25519, string(pub), "ssh:"})
	pk, err := gossh.ParsePublicKey(wire)
	if err != nil {
		t.Fatal(err)
	}
	return &skSigner{priv: priv, pub: pk, flags: flags}
}

func (s *skSigner) PublicKey() gossh.PublicKey { return s.pub }

func (s *skSigner) Sign(_ io.Reader, data []byte) (*gossh.Signature, error) {
	app, msg := sha256.Sum256([]byte("ssh:")), sha256.Sum256(data)
	var counter [4]byte
	binary.BigEndian.PutUint32(counter[:], 7)
	signed := append(append(append(app[:], s.flags), counter[:]...), msg[:]...)
	return &gossh.Signature{Format: gossh.KeyAlgoSKED25519, Blob: ed25519.Sign(s.priv, signed),
		Rest: append([]byte{s.flags}, counter[:]...)}, nil
}

// A FIDO key's sign-in must carry the touch: x/crypto/ssh refuses a
// security-key signature without the user-presence flag unless the server
// grants "no-touch-required", which the gate never does.
func TestSecurityKeySignInNeedsATouch(t *testing.T) {
	touched := newSKSigner(t, 0x01)
	untouched := &skSigner{priv: touched.priv, pub: touched.pub, flags: 0x00} // the same key, not touched
	r := startGate(t, Options{Operators: []Operator{{Name: "ada", Keys: []gossh.PublicKey{touched.pub}}}})
	run := func(s gossh.Signer) (string, error) {
		c, err := gossh.Dial("tcp", r.addr.String(), &gossh.ClientConfig{User: "ada", Auth: []gossh.AuthMethod{gossh.PublicKeys(s)},
			HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
		if err != nil {
			return "", err
		}
		defer c.Close()
		sess, err := c.NewSession()
		if err != nil {
			return "", err
		}
		out, _ := sess.Output("pending")
		return string(out), nil
	}
	if out, err := run(untouched); err == nil || out != "" {
		t.Fatalf("untouched: %q %v\n%s", out, err, r.log.String())
	}
	// the server logs once its side of the handshake has ended, which may
	// be after the client has given up
	testwait.For(t, 10*time.Second, func() error {
		if !strings.Contains(r.log.String(), "user presence") {
			return fmt.Errorf("the refusal does not say why:\n%s", r.log.String())
		}
		return nil
	})
	out, err := run(touched)
	if err != nil || !strings.HasPrefix(out, "ada "+gossh.FingerprintSHA256(touched.pub)) {
		t.Fatalf("touched: %q %v", out, err)
	}
}
