package media

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/preview"
	"github.com/vigil-dev/vigil/safetext"
)

// Limits on inputs.
const (
	maxURILen    = 4096
	maxDeviceLen = 64
)

// AllowedSchemes are the URI schemes media_uri may use. An allowlist rather
// than a denylist because players resolve some schemes by searching the web
// (mpv's ytdl://ytsearch:…), which seed 004 forbids.
var AllowedSchemes = []string{"file", "http", "https", "rtsp", "rtsps", "rtmp", "rtmps", "smb", "nfs", "sftp", "media-source"}

// ContentTypes are the media_content_type values accepted for Home Assistant.
var ContentTypes = []string{"music", "video", "audio", "url", "playlist", "channel", "episode", "tvshow", "image"}

// DefaultContentType is sent to Home Assistant's play_media when the
// manifest names none: a fixed documented default, not a guess from the URI.
const DefaultContentType = "music"

type rawInputs struct {
	MediaURI, TargetDevice, PositionSeconds, MediaContentType *json.RawMessage
}

func bad(field, format string, args ...any) *task.Error {
	return task.Errorf(task.ExecutionFailed, "input validation failed: inputs.%s: %s", field, fmt.Sprintf(format, args...))
}

// targetDevice pulls target_device out of inputs without validating the
// rest, so the lease's device constraint can be checked in its place in the
// order (before input validation).
func targetDevice(inputs json.RawMessage) string {
	var r struct {
		TargetDevice any `json:"target_device"`
	}
	_ = json.Unmarshal(inputs, &r)
	s, _ := r.TargetDevice.(string)
	return s
}

// ParseInputs validates a media task's inputs per seed 004 §4: unknown
// fields, wrong types and broken rules are EXECUTION_FAILED errors (the
// seed's closed set has no input code) naming the field and the rule.
// allowed is the device allowlist.
func ParseInputs(capability string, inputs json.RawMessage, allowed []string) (Action, error) {
	if !Supports(capability) {
		return Action{}, task.Errorf(task.UnsupportedCapability,
			"capability check failed: the media executor supports only %s, not %q",
			strings.Join(Capabilities, ", "), capability)
	}
	r, err := decodeInputs(inputs)
	if err != nil {
		return Action{}, err
	}
	// The fields are checked in this order, so the first error named is
	// always the same one.
	a := Action{Capability: capability}
	if err := a.setDevice(r.TargetDevice, allowed); err != nil {
		return Action{}, err
	}
	if err := a.setURI(r.MediaURI); err != nil {
		return Action{}, err
	}
	if err := a.setPosition(r.PositionSeconds); err != nil {
		return Action{}, err
	}
	if err := a.setContentType(r.MediaContentType); err != nil {
		return Action{}, err
	}
	return a, nil
}

// decodeInputs reads the inputs object into its known fields, refusing
// anything else: another JSON value, trailing data, an unknown field (the
// first in sorted order).
func decodeInputs(inputs json.RawMessage) (rawInputs, error) {
	var r rawInputs
	if len(inputs) == 0 {
		inputs = json.RawMessage("{}")
	}
	// A map, not a struct: encoding/json matches struct fields case-
	// insensitively, and "Target_Device" must be an unknown field.
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(inputs))
	if err := dec.Decode(&m); err != nil || m == nil {
		return r, task.Errorf(task.ExecutionFailed, "input validation failed: inputs: must be a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return r, task.Errorf(task.ExecutionFailed, "input validation failed: inputs: unexpected data after the object")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := m[k]
		switch k {
		case "media_uri":
			r.MediaURI = &v
		case "target_device":
			r.TargetDevice = &v
		case "position_seconds":
			r.PositionSeconds = &v
		case "media_content_type":
			r.MediaContentType = &v
		default:
			// The name is the agent's: masked whole, then cut, so a key
			// pasted as a field name is not shown by halves.
			k = preview.Snippet(k, 64)
			return r, bad(k, "unknown field (allowed: media_uri, target_device, position_seconds, media_content_type)")
		}
	}
	return r, nil
}

// setDevice checks target_device: required, allowlisted (seed 004 §5).
func (a *Action) setDevice(raw *json.RawMessage, allowed []string) error {
	dev, err := str(raw, "target_device")
	if err != nil {
		return err
	}
	if raw == nil || dev == "" {
		return bad("target_device", "required: name an allowlisted device")
	}
	if len(dev) > maxDeviceLen {
		return bad("target_device", "longer than %d characters", maxDeviceLen)
	}
	if !slices.Contains(allowed, dev) {
		return bad("target_device", "%q is not an allowlisted device (allowed: %s)", dev, strings.Join(allowed, ", "))
	}
	a.Device = dev
	return nil
}

// setURI checks media_uri: explicit; required to play, checked when
// present elsewhere.
func (a *Action) setURI(raw *json.RawMessage) error {
	if raw != nil {
		uri, err := str(raw, "media_uri")
		if err != nil {
			return err
		}
		if err := checkURI(uri); err != nil {
			return err
		}
		a.MediaURI = uri
	}
	if a.Capability == CapPlay && a.MediaURI == "" {
		return bad("media_uri", "required for MEDIA_PLAY: an absolute path or absolute URI")
	}
	return nil
}

// setPosition checks position_seconds: only for seek, a finite number >= 0.
func (a *Action) setPosition(raw *json.RawMessage) error {
	if raw == nil {
		if a.Capability == CapSeek {
			return bad("position_seconds", "required for MEDIA_SEEK: a number >= 0")
		}
		return nil
	}
	if a.Capability != CapSeek {
		return bad("position_seconds", "only allowed for MEDIA_SEEK")
	}
	var f float64
	if err := json.Unmarshal(*raw, &f); err != nil || bytes.Equal(*raw, []byte("null")) {
		return bad("position_seconds", "must be a number, got %s", task.JSONKind(*raw))
	}
	if f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return bad("position_seconds", "must be >= 0, got %s", *raw)
	}
	if f > 1e7 {
		return bad("position_seconds", "must be at most 10000000, got %s", *raw)
	}
	a.Position = f
	return nil
}

// setContentType checks media_content_type: only for play, one of
// ContentTypes.
func (a *Action) setContentType(raw *json.RawMessage) error {
	if raw == nil {
		return nil
	}
	if a.Capability != CapPlay {
		return bad("media_content_type", "only allowed for MEDIA_PLAY")
	}
	ct, err := str(raw, "media_content_type")
	if err != nil {
		return err
	}
	if !slices.Contains(ContentTypes, ct) {
		return bad("media_content_type", "must be one of %s, got %q", strings.Join(ContentTypes, ", "), ct)
	}
	a.ContentType = ct
	return nil
}

func str(raw *json.RawMessage, field string) (string, error) {
	if raw == nil {
		return "", nil
	}
	var s string
	if (*raw)[0] != '"' || json.Unmarshal(*raw, &s) != nil {
		return "", bad(field, "must be a string, got %s", task.JSONKind(*raw))
	}
	return s, nil
}

// checkURI enforces seed 004 §4.1: media_uri is explicit. That means an
// absolute file path or an absolute URI of an allowed scheme, with no
// whitespace or control characters — a search phrase fails all of these.
//
// Issue 18: characters that steer a terminal or reorder what a person reads
// are rejected outright — C0 and C1 controls, and bidi controls (embeddings,
// overrides, isolates, directional marks), which no real media URI needs and
// which make `…/gpj.exe` read as `…/exe.jpg`. Other format characters
// (zero-width space, word joiner, soft hyphen…) are accepted, since IRIs can
// carry them, and every screen shows them as marked escapes beside
// safetext.URLWarnings. A rejection names the field, the rule and the code
// point, never the value itself.
func checkURI(uri string) error {
	if uri == "" {
		return bad("media_uri", "must not be empty")
	}
	if len(uri) > maxURILen {
		return bad("media_uri", "longer than %d bytes", maxURILen)
	}
	if !utf8.ValidString(uri) {
		return bad("media_uri", "must be valid UTF-8")
	}
	for i, c := range uri {
		switch {
		case c == unicode.ReplacementChar:
			// what JSON decoding makes of invalid UTF-8
			return bad("media_uri", "must be valid UTF-8 (found %U, the replacement character, at byte %d)", c, i)
		case unicode.IsControl(c):
			return bad("media_uri", "must not contain control characters (found %U at byte %d)", c, i)
		case safetext.IsBidiControl(c):
			return bad("media_uri", "must not contain right-to-left/left-to-right controls, which change the order it reads in (found %U at byte %d)", c, i)
		}
	}
	if strings.HasPrefix(uri, "/") {
		if strings.HasPrefix(uri, "//") {
			return bad("media_uri", "must be an absolute path or absolute URI, got a network-path reference %q", uri)
		}
		return nil // an absolute path; spaces are legal in file names
	}
	if strings.IndexFunc(uri, unicode.IsSpace) >= 0 {
		return bad("media_uri", "must be an absolute path or absolute URI (no search phrases), got %q", uri)
	}
	scheme, _, hasScheme := strings.Cut(uri, ":")
	if !hasScheme || !validScheme(scheme) {
		return bad("media_uri", "must be an absolute path or absolute URI (no search phrases), got %q", uri)
	}
	scheme = strings.ToLower(scheme)
	if !slices.Contains(AllowedSchemes, scheme) {
		return bad("media_uri", "scheme %q is not allowed (allowed: %s)", scheme, strings.Join(AllowedSchemes, ", "))
	}
	u, err := url.Parse(uri)
	if err != nil {
		return bad("media_uri", "not a valid URI: %v", errors.Unwrap(err))
	}
	switch scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" || !strings.HasPrefix(u.Path, "/") {
			return bad("media_uri", "a file URI must name an absolute local path, got %q", uri)
		}
	case "media-source":
		if u.Opaque != "" || u.Host == "" {
			return bad("media_uri", "a media-source URI must be media-source://…, got %q", uri)
		}
	default:
		if u.Host == "" {
			return bad("media_uri", "a %s URI must name a host, got %q", scheme, uri)
		}
	}
	return nil
}

// validScheme is RFC 3986's scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
func validScheme(s string) bool {
	for i, c := range s {
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !alpha && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}
