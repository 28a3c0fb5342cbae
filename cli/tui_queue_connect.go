package cli

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/vigil-dev/vigil/exec/natsqueue"
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

// willNotHeal tells an attempt that trying again cannot fix — the server
// refused these credentials, its certificate is not one this host trusts,
// or it is too old or runs without JetStream — from the rest (the server down or restarting, the network not
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
		errors.As(err, &unknownCA) || errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &verify) ||
		errors.As(err, new(*natsqueue.ServerTooOldError)) || errors.As(err, new(*natsqueue.NoJetStreamError))
}
