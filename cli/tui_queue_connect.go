package cli

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/vigil-dev/vigil/config"
)

// How long the TUI waits between attempts to reach the shared queue: the
// first again soon (a server restarting), then less often, never longer
// than the cap (a laptop whose VPN comes up is live within it).
var (
	tuiQueueRetryFirst = 500 * time.Millisecond
	tuiQueueRetryMax   = 5 * time.Second
)

// retryWait is the wait before attempt n+1 (n from 0): doubling from
// tuiQueueRetryFirst up to tuiQueueRetryMax.
func retryWait(n int) time.Duration {
	d := tuiQueueRetryFirst
	for range n {
		d *= 2
		if d >= tuiQueueRetryMax {
			return tuiQueueRetryMax
		}
	}
	return d
}

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

// willNotHeal tells an attempt that trying again cannot fix — the server
// refused these credentials, or its certificate is not one this host
// trusts — from the rest (the server down or restarting, the network not
// up yet, a slow answer), which are retried with the error on the pane.
func willNotHeal(err error) bool {
	var (
		unknownCA x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		verify    *tls.CertificateVerificationError
	)
	return errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) ||
		errors.Is(err, nats.ErrAuthRevoked) || errors.Is(err, nats.ErrAccountAuthExpired) ||
		strings.Contains(strings.ToLower(err.Error()), "authorization violation") ||
		errors.As(err, &unknownCA) || errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &verify)
}
