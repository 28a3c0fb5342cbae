package media

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sort"

	"github.com/gowebpki/jcs"
)

// Capabilities of the media executor: the closed set of seed 004 §3.
const (
	CapPlay  = "MEDIA_PLAY"
	CapPause = "MEDIA_PAUSE"
	CapStop  = "MEDIA_STOP"
	CapSeek  = "MEDIA_SEEK"
)

// Capabilities lists them; every one of them changes a device's state.
var Capabilities = []string{CapPlay, CapPause, CapStop, CapSeek}

// Supports reports whether capabilityID is one of the media capabilities.
func Supports(capabilityID string) bool {
	switch capabilityID {
	case CapPlay, CapPause, CapStop, CapSeek:
		return true
	}
	return false
}

// Action is a validated media action.
type Action struct {
	Capability  string
	Device      string
	MediaURI    string  // MEDIA_PLAY only (validated when given elsewhere, then unused)
	Position    float64 // MEDIA_SEEK only
	ContentType string  // media_content_type for Home Assistant's play_media
}

// Plan is the exact request a driver will send for an action. The approvals
// preview is built from it (masked there); Do sends exactly this.
type Plan struct {
	Method  string            `json:"method"` // POST for HTTP; IPC for mpv; SIM for the simulator
	URL     string            `json:"url"`    // http(s)://…, unix://<socket>, sim://<device>
	Headers map[string]string `json:"headers"`
	Body    []byte            `json:"body"`   // JSON; for mpv one command object per line
	Effect  string            `json:"effect"` // one sentence for a person: what will happen
}

// Hash identifies a plan: hex SHA-256 of the RFC 8785 form of
// {method, url, headers, body (base64)}. An approval may carry it so the
// executor refuses to send anything other than what was shown.
func (p Plan) Hash() string {
	keys := make([]string, 0, len(p.Headers))
	for k := range p.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	doc := map[string]any{"method": p.Method, "url": p.URL, "headers": p.Headers,
		"body": base64.StdEncoding.EncodeToString(p.Body)}
	raw, _ := json.Marshal(doc) // strings and a string map always marshal
	canon, err := jcs.Transform(raw)
	if err != nil {
		canon = raw
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// Driver is one kind of device. Plan must not touch the device; Do performs
// the plan; State reads the device's observable state as bytes that are
// equal whenever the state is (they are hashed into the result).
type Driver interface {
	Plan(a Action) (Plan, error)
	Do(ctx context.Context, p Plan) error
	State(ctx context.Context) ([]byte, error)
}

// TransientError marks a failure worth retrying (a refused connection, an
// HTTP 5xx): the commands are absolute, so sending one again is harmless.
type TransientError struct{ Err error }

func (e *TransientError) Error() string { return e.Err.Error() }
func (e *TransientError) Unwrap() error { return e.Err }

// Transient wraps err as retryable.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return &TransientError{Err: err}
}

// IsTransient reports whether err is retryable.
func IsTransient(err error) bool {
	var t *TransientError
	return errors.As(err, &t)
}

// StateHash is how a State is written into a result: "sha256:<hex>".
func StateHash(state []byte) string {
	sum := sha256.Sum256(state)
	return "sha256:" + hex.EncodeToString(sum[:])
}
