package media

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	"github.com/gowebpki/jcs"

	"github.com/vigil-dev/vigil/preview"
)

// Hass drives a Home Assistant media_player entity through the REST API:
// POST {base}/api/services/media_player/{service} with a bearer token.
type Hass struct {
	id        string
	base      string
	entity    string
	tokenEnv  string
	tokenFile string
	getenv    func(string) string
	client    *http.Client
}

const (
	maxTokenBytes = 8 << 10
	maxHassBody   = 1 << 20
	userAgent     = "vigil"
)

// NewHass returns the Home Assistant device id. client may be nil; redirects
// are never followed, so the bearer token only ever goes to base.
func NewHass(id, baseURL, entityID, tokenEnv, tokenFile string, getenv func(string) string, client *http.Client) (*Hass, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("devices[%s].base_url: must be an http(s) URL with a host, got %q", id, baseURL)
	}
	if !strings.HasPrefix(entityID, "media_player.") || len(entityID) == len("media_player.") ||
		strings.ContainsAny(entityID, "/?#% ") {
		return nil, fmt.Errorf("devices[%s].entity_id: must be media_player.<name>, got %q", id, entityID)
	}
	if (tokenEnv == "") == (tokenFile == "") {
		return nil, fmt.Errorf("devices[%s]: set exactly one of token_env or token_file", id)
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	c := &http.Client{}
	if client != nil {
		cc := *client
		c = &cc
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Hass{id: id, base: strings.TrimRight(baseURL, "/"), entity: entityID,
		tokenEnv: tokenEnv, tokenFile: tokenFile, getenv: getenv, client: c}, nil
}

func (h *Hass) token() (string, error) {
	if h.tokenEnv != "" {
		t := strings.TrimSpace(h.getenv(h.tokenEnv))
		if t == "" {
			return "", fmt.Errorf("hass %s: environment variable %s (token_env) is empty", h.id, h.tokenEnv)
		}
		return t, nil
	}
	f, err := os.Open(h.tokenFile)
	if err != nil {
		return "", fmt.Errorf("hass %s: token_file: %w", h.id, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTokenBytes+1))
	if err != nil {
		return "", fmt.Errorf("hass %s: token_file: %w", h.id, err)
	}
	t := strings.TrimSpace(string(data))
	if t == "" || len(data) > maxTokenBytes || strings.ContainsAny(t, "\r\n") {
		return "", fmt.Errorf("hass %s: token_file %s must hold one token line", h.id, h.tokenFile)
	}
	return t, nil
}

// Plan implements Driver. The bodies are marshalled from structs, so their
// key order and bytes are fixed.
func (h *Hass) Plan(a Action) (Plan, error) {
	tok, err := h.token()
	if err != nil {
		return Plan{}, err
	}
	var service, effect string
	var body any
	switch a.Capability {
	case CapPlay:
		ct := a.ContentType
		if ct == "" {
			ct = DefaultContentType
		}
		service = "play_media"
		body = struct {
			EntityID string `json:"entity_id"`
			ID       string `json:"media_content_id"`
			Type     string `json:"media_content_type"`
		}{h.entity, a.MediaURI, ct}
		effect = fmt.Sprintf("Play %s (%s) on %s (Home Assistant %s)", a.MediaURI, ct, h.id, h.entity)
	case CapPause, CapStop:
		service = map[string]string{CapPause: "media_pause", CapStop: "media_stop"}[a.Capability]
		body = struct {
			EntityID string `json:"entity_id"`
		}{h.entity}
		verb := map[string]string{CapPause: "Pause", CapStop: "Stop"}[a.Capability]
		effect = fmt.Sprintf("%s playback on %s (Home Assistant %s)", verb, h.id, h.entity)
	case CapSeek:
		service = "media_seek"
		body = struct {
			EntityID string  `json:"entity_id"`
			Position float64 `json:"seek_position"`
		}{h.entity, a.Position}
		effect = fmt.Sprintf("Seek to %s on %s (Home Assistant %s)", fmtSeconds(a.Position), h.id, h.entity)
	default:
		return Plan{}, fmt.Errorf("hass: unsupported capability %q", a.Capability)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return Plan{}, err
	}
	return Plan{
		Method: http.MethodPost,
		URL:    h.base + "/api/services/media_player/" + service,
		Headers: map[string]string{
			"Authorization": "Bearer " + tok,
			"Content-Type":  "application/json",
			"Accept":        "application/json",
			"User-Agent":    userAgent,
		},
		Body:   b,
		Effect: effect,
	}, nil
}

// Do implements Driver: send the plan as is. 5xx and 429 answers and
// network errors are transient; other non-2xx answers are final.
func (h *Hass) Do(ctx context.Context, p Plan) error {
	if !strings.HasPrefix(p.URL, h.base+"/api/services/media_player/") || p.Method != http.MethodPost {
		return fmt.Errorf("hass: plan %s %s is not a media_player service call on %s", p.Method, p.URL, h.base)
	}
	_, err := h.send(ctx, p.Method, p.URL, p.Headers, p.Body)
	return err
}

func (h *Hass) send(ctx context.Context, method, u string, headers map[string]string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// Strip the URL wrapper: it is ours, and the message stays short.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, Transient(fmt.Errorf("hass %s: %s %s: %w", h.id, method, u, err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxHassBody))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, Transient(fmt.Errorf("hass %s: reading the answer: %w", h.id, err))
	}
	// The token sent is masked in whatever the answer echoes back.
	known := strings.TrimSpace(strings.TrimPrefix(headers["Authorization"], "Bearer "))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return data, nil
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("hass %s: %s %s: %s: check the token (token_env/token_file)", h.id, method, u, resp.Status)
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return nil, Transient(fmt.Errorf("hass %s: %s %s: %s%s", h.id, method, u, resp.Status, hassMessage(data, known)))
	}
	return nil, fmt.Errorf("hass %s: %s %s: %s%s", h.id, method, u, resp.Status, hassMessage(data, known))
}

// maxHassMessage bounds the part of an error answer kept as the reason.
const maxHassMessage = 300

// hassMessage is Home Assistant's own reason for refusing a call, as it
// sends it — {"message": "..."} from its API views, or a short text body —
// for the failure a person reads ("Entity media_player.x not found"). ""
// when the answer says nothing.
func hassMessage(body []byte, known ...string) string {
	var m struct {
		Message string `json:"message"`
	}
	msg := ""
	if json.Unmarshal(body, &m) == nil && m.Message != "" {
		msg = m.Message
	} else if t := strings.TrimSpace(string(body)); t != "" && !strings.HasPrefix(t, "<") {
		msg = t
	}
	if msg = preview.Snippet(msg, maxHassMessage, known...); msg == "" {
		return ""
	}
	return ": Home Assistant says: " + msg
}

// State implements Driver: the entity's state and attributes from
// GET /api/states/{entity_id}, in RFC 8785 form. last_changed,
// last_updated, last_reported and context are left out: they change on every
// poll. What a person reads — attributes.media_content_id, media_title and
// media_position — is also copied to the top level under the names the other
// drivers use (media_uri, media_title, position_seconds), so a reader of
// any driver's state finds them in one place (see DescribeState).
func (h *Hass) State(ctx context.Context) ([]byte, error) {
	tok, err := h.token()
	if err != nil {
		return nil, err
	}
	data, err := h.send(ctx, http.MethodGet, h.base+"/api/states/"+h.entity, map[string]string{
		"Authorization": "Bearer " + tok, "Accept": "application/json", "User-Agent": userAgent}, nil)
	if err != nil {
		return nil, err
	}
	st, err := parseHassState(data)
	if err != nil {
		return nil, fmt.Errorf("hass %s: state of %s: %w", h.id, h.entity, err)
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	return jcs.Transform(raw)
}

// hassState is Home Assistant's state object as Vigil keeps it.
type hassState struct {
	EntityID   string          `json:"entity_id"`
	State      string          `json:"state"`
	Attributes json.RawMessage `json:"attributes"`
	// copied from attributes (absent when Home Assistant gives none)
	MediaURI   string   `json:"media_uri,omitempty"`
	MediaTitle string   `json:"media_title,omitempty"`
	Position   *float64 `json:"position_seconds,omitempty"`
	PositionAt string   `json:"position_updated_at,omitempty"`
}

// hassAttributes are the media_player attributes a person reads. Home
// Assistant leaves out the ones an entity does not have, and a null is the
// same as absent.
type hassAttributes struct {
	MediaContentID *string  `json:"media_content_id"`
	MediaTitle     *string  `json:"media_title"`
	MediaPosition  *float64 `json:"media_position"`
	PositionAt     *string  `json:"media_position_updated_at"`
}

// attr is attribute name as a T, or nil when it is absent, null or not a T.
func attr[T any](raw map[string]json.RawMessage, name string) *T {
	var v *T
	if b, ok := raw[name]; !ok || json.Unmarshal(b, &v) != nil {
		return nil
	}
	return v
}

func parseHassState(data []byte) (hassState, error) {
	var st hassState
	if err := json.Unmarshal(data, &st); err != nil {
		return st, err
	}
	if st.State == "" {
		return st, errors.New(`no "state" in the answer`)
	}
	if len(st.Attributes) == 0 || string(st.Attributes) == "null" {
		st.Attributes = json.RawMessage("{}")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(st.Attributes, &raw); err != nil {
		return st, fmt.Errorf("attributes: %w", err)
	}
	// each attribute on its own: one of another type than a media player's
	// (a custom integration's) is left out, and the others are still read
	a := hassAttributes{MediaContentID: attr[string](raw, "media_content_id"), MediaTitle: attr[string](raw, "media_title"),
		MediaPosition: attr[float64](raw, "media_position"), PositionAt: attr[string](raw, "media_position_updated_at")}
	if a.MediaContentID != nil {
		st.MediaURI = *a.MediaContentID
	}
	if a.MediaTitle != nil {
		st.MediaTitle = *a.MediaTitle
	}
	if a.MediaPosition != nil && !math.IsNaN(*a.MediaPosition) && !math.IsInf(*a.MediaPosition, 0) && *a.MediaPosition >= 0 {
		st.Position = a.MediaPosition
		if a.PositionAt != nil {
			st.PositionAt = *a.PositionAt
		}
	}
	return st, nil
}

// DescribeState turns any driver's State bytes — the simulator's
// {state, media_uri, position_seconds}, mpv's {idle, path, pause, time_pos}
// or Home Assistant's {state, attributes: {media_title, media_content_id,
// media_position}} — into a phrase for a person: "paused at 12:31 of
// a.mp3", "playing Kind of Blue at 0:12 (position as of 10:00:05)", "off".
// It never names an empty title, and says "" for a shape it does not know.
// Media URIs are masked; the phrase is untrusted text for display (callers
// show it through safetext).
func DescribeState(b []byte) string {
	var s struct {
		State      string          `json:"state"`
		MediaURI   string          `json:"media_uri"`
		MediaTitle string          `json:"media_title"`
		Position   *float64        `json:"position_seconds"`
		PositionAt string          `json:"position_updated_at"`
		Idle       *bool           `json:"idle"`
		Path       *string         `json:"path"`
		Pause      *bool           `json:"pause"`
		TimePos    *float64        `json:"time_pos"`
		Attributes json.RawMessage `json:"attributes"`
	}
	if json.Unmarshal(b, &s) != nil {
		return ""
	}
	if s.Idle != nil { // mpv
		switch {
		case *s.Idle || s.Path == nil:
			return "idle"
		case s.Pause != nil && *s.Pause:
			s.State = "paused"
		default:
			s.State = "playing"
		}
		s.MediaURI, s.Position = *s.Path, s.TimePos
	}
	if len(s.Attributes) > 0 { // Home Assistant, read from attributes even if the copies are missing
		if hs, err := parseHassState(b); err == nil {
			s.MediaURI, s.MediaTitle, s.Position, s.PositionAt = hs.MediaURI, hs.MediaTitle, hs.Position, hs.PositionAt
		}
	}
	if s.Position != nil && !(*s.Position >= 0 && *s.Position <= maxPosition) {
		s.Position = nil // no player is there (NaN fails both tests)
	}
	st := strings.TrimSpace(s.State)
	switch st {
	case "", "idle":
		return "idle"
	case "off", "on", "standby", "unknown":
		return st
	case "unavailable":
		return "unavailable (Home Assistant cannot reach the player)"
	}
	name := strings.TrimSpace(s.MediaTitle)
	if name == "" {
		if u := strings.TrimSpace(preview.MaskString(s.MediaURI)); u != "" {
			if b := path.Base(u); b != "." && b != "/" {
				name = b
			} else {
				name = u
			}
		}
	}
	out := st
	switch {
	case s.Position != nil && name != "":
		out += " at " + mmss(*s.Position) + " of " + name
	case s.Position != nil:
		out += " at " + mmss(*s.Position)
	case name != "":
		out += " " + name
	}
	if s.Position != nil && s.PositionAt != "" && st == "playing" {
		if t, err := time.Parse(time.RFC3339Nano, s.PositionAt); err == nil {
			out += " (position as of " + t.UTC().Format("15:04:05") + " UTC)"
		}
	}
	return out
}

// maxPosition is a bound no media reaches (a year): past it a reported
// position is nonsense, and would overflow mmss.
const maxPosition = 365 * 24 * 3600

func mmss(sec float64) string {
	t := int(math.Floor(sec))
	if t >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", t/3600, t/60%60, t%60)
	}
	return fmt.Sprintf("%d:%02d", t/60, t%60)
}
