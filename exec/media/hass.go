package media

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/gowebpki/jcs"
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
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return data, nil
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("hass %s: %s %s: %s: check the token (token_env/token_file)", h.id, method, u, resp.Status)
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return nil, Transient(fmt.Errorf("hass %s: %s %s: %s", h.id, method, u, resp.Status))
	}
	return nil, fmt.Errorf("hass %s: %s %s: %s", h.id, method, u, resp.Status)
}

// State implements Driver: the entity's state and attributes from
// GET /api/states/{entity_id}, in RFC 8785 form. last_changed,
// last_updated and context are left out: they change on every poll.
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
	var st struct {
		EntityID   string          `json:"entity_id"`
		State      string          `json:"state"`
		Attributes json.RawMessage `json:"attributes"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("hass %s: state of %s: %w", h.id, h.entity, err)
	}
	if len(st.Attributes) == 0 {
		st.Attributes = json.RawMessage("{}")
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	return jcs.Transform(raw)
}
