package cli

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/vigil-dev/vigil/config"
)

// checkQueueFiles reads the [queue] files the way the connection will,
// before any network: nats.go reads a credentials file only during the
// handshake, so with the server down a file that is not credentials
// would otherwise look like a server that is not up yet, retried for
// ever. Each error names its key.
func checkQueueFiles(q config.QueueConfig) error {
	if q.CredsFile != "" {
		if err := checkCredsFile(q.CredsFile); err != nil {
			return fmt.Errorf("queue.creds_file: %s is not a NATS credentials file (a user JWT and its nkey seed): %w",
				q.CredsFile, err)
		}
	}
	if q.CAFile != "" {
		b, err := os.ReadFile(q.CAFile)
		if err != nil {
			return fmt.Errorf("queue.ca_file: %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(b) {
			return fmt.Errorf("queue.ca_file: %s holds no PEM certificate", q.CAFile)
		}
	}
	if q.CertFile != "" {
		if _, err := tls.LoadX509KeyPair(q.CertFile, q.KeyFile); err != nil {
			return fmt.Errorf("queue.cert_file: %s with queue.key_file %s is not a certificate and its key: %w",
				q.CertFile, q.KeyFile, err)
		}
	}
	return nil
}

// checkCredsFile parses a credentials file as nats.UserCredentials does:
// its user JWT, and a user nkey seed. Its errors never quote the file.
func checkCredsFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	tok, err := nkeys.ParseDecoratedJWT(b)
	if err != nil {
		return errors.New("no user JWT")
	}
	if _, err := jwt.DecodeUserClaims(tok); err != nil {
		return errors.New("its JWT is not a user JWT")
	}
	if _, err := nkeys.ParseDecoratedUserNKey(b); err != nil {
		return errors.New("no user nkey seed")
	}
	return nil
}
