package sshgate

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	gossh "golang.org/x/crypto/ssh"

	"github.com/vigil-dev/vigil/internal/atomicfile"
)

// HostKey reads the gate's private host key at path, making an Ed25519 one
// first when there is none (0600, written atomically: a start that dies
// half-way leaves no key, never half of one). made says it was just made.
// A key that exists is reused as it is: clients remember it, and a new one
// would look to them like someone else answering.
func HostKey(path string) (signer gossh.Signer, made bool, err error) {
	if fi, serr := os.Stat(path); serr == nil && fi.Mode().Perm()&0o077 != 0 {
		// as sshd does: a host key others can read is anyone's host key
		return nil, false, fmt.Errorf("ssh host key %s: mode %s lets other accounts read it; chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if b, err = newHostKey(path); err != nil {
			return nil, false, fmt.Errorf("ssh host key %s: %w", path, err)
		}
		made = true
	} else if err != nil {
		return nil, false, fmt.Errorf("ssh host key: %w", err)
	}
	signer, err = gossh.ParsePrivateKey(b)
	if err != nil {
		return nil, false, fmt.Errorf("ssh host key %s: %w", path, err)
	}
	return signer, made, nil
}

// newHostKey writes a new Ed25519 key in OpenSSH's format at path and
// returns its bytes.
func newHostKey(path string) ([]byte, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	block, err := gossh.MarshalPrivateKey(priv, "vigil ssh host key")
	if err != nil {
		return nil, err
	}
	b := pem.EncodeToMemory(block)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(path, b, 0o600); err != nil {
		return nil, err
	}
	return b, nil
}
