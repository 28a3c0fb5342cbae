package media

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// realHassState is GET /api/states/<entity_id> as Home Assistant sends it
// for a media_player (core's State.as_dict: entity_id, state, attributes,
// last_changed, last_reported, last_updated, context).
const realHassState = `{"entity_id":"media_player.kitchen","state":"playing","attributes":{"volume_level":0.4,` +
	`"is_volume_muted":false,"media_content_id":"https://media.example.com/jazz/so-what.mp3","media_content_type":"music",` +
	`"media_duration":545.0,"media_position":12.7,"media_position_updated_at":"2026-11-22T10:00:05.123456+00:00",` +
	`"media_title":"So What","media_artist":"Miles Davis","friendly_name":"Kitchen","supported_features":152463},` +
	`"last_changed":"2026-11-22T09:59:50.000001+00:00","last_reported":"2026-11-22T10:00:05.123456+00:00",` +
	`"last_updated":"2026-11-22T10:00:05.123456+00:00","context":{"id":"01JD0000000000000000000000","parent_id":null,"user_id":null}}`

// hassStateServer answers only the exact request Home Assistant's REST API
// takes for a state read, and fails the test on anything else.
func hassStateServer(t *testing.T, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method != http.MethodGet:
			t.Errorf("method %s, want GET", r.Method)
		case r.URL.Path != "/api/states/media_player.kitchen" || r.URL.RawQuery != "":
			t.Errorf("path %s?%s, want /api/states/media_player.kitchen", r.URL.Path, r.URL.RawQuery)
		case r.Header.Get("Authorization") != "Bearer "+hassToken:
			t.Errorf("authorization %q", r.Header.Get("Authorization"))
		case r.Header.Get("Accept") != "application/json":
			t.Errorf("accept %q", r.Header.Get("Accept"))
		}
		if b, _ := io.ReadAll(r.Body); len(b) != 0 {
			t.Errorf("GET with a body: %q", b)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newTestHass(t *testing.T, base string) *Hass {
	t.Helper()
	h, err := NewHass("kitchen", base, "media_player.kitchen", "HASS_TOKEN", "", func(string) string { return hassToken }, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// The state is read from Home Assistant's real shape: state at the top,
// title, content id and position inside attributes.
func TestHassStateReadsTheRealShape(t *testing.T) {
	srv := hassStateServer(t, realHassState)
	b, err := newTestHass(t, srv.URL).State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got["state"] != "playing" || got["media_uri"] != "https://media.example.com/jazz/so-what.mp3" ||
		got["media_title"] != "So What" || got["position_seconds"] != 12.7 {
		t.Fatalf("state %s", b)
	}
	for _, volatile := range []string{"last_changed", "last_updated", "last_reported", "context"} {
		if _, ok := got[volatile]; ok {
			t.Fatalf("%s kept: the state's hash would change on every poll: %s", volatile, b)
		}
	}
	want := "playing at 0:12 of So What (position as of 10:00:05 UTC)"
	if d := DescribeState(b); d != want {
		t.Fatalf("DescribeState = %q, want %q", d, want)
	}
	// and straight from the wire, without Vigil's copies
	if d := DescribeState([]byte(realHassState)); d != want {
		t.Fatalf("DescribeState(wire) = %q, want %q", d, want)
	}
}

// Must-say / must-not-say table: no phrase names an empty title ("of .").
func TestHassDescribeStateNeverPrintsAnEmptyTitle(t *testing.T) {
	cases := []struct{ name, state, want string }{
		{"ha playing without title or id", `{"entity_id":"media_player.k","state":"playing","attributes":{"media_position":3}}`, "playing at 0:03"},
		{"ha playing, id only", `{"entity_id":"media_player.k","state":"paused","attributes":{"media_content_id":"spotify:track:abc","media_position":61}}`, "paused at 1:01 of spotify:track:abc"},
		{"ha playing, nulls", `{"entity_id":"media_player.k","state":"playing","attributes":{"media_title":null,"media_content_id":null,"media_position":null}}`, "playing"},
		{"ha empty title falls back to the file", `{"entity_id":"media_player.k","state":"playing","attributes":{"media_title":"  ","media_content_id":"/music/a.flac"}}`, "playing a.flac"},
		{"ha off", `{"entity_id":"media_player.k","state":"off","attributes":{"friendly_name":"K"}}`, "off"},
		{"ha on", `{"entity_id":"media_player.k","state":"on","attributes":{}}`, "on"},
		{"ha unavailable", `{"entity_id":"media_player.k","state":"unavailable","attributes":{"restored":true}}`, "unavailable (Home Assistant cannot reach the player)"},
		{"ha idle", `{"entity_id":"media_player.k","state":"idle","attributes":{}}`, "idle"},
		{"sim", `{"state":"paused","media_uri":"/media/a.mp3","position_seconds":751}`, "paused at 12:31 of a.mp3"},
		{"sim without uri", `{"state":"playing"}`, "playing"},
		{"mpv", `{"idle":false,"path":"/m/b.mkv","pause":true,"time_pos":5}`, "paused at 0:05 of b.mkv"},
		{"mpv idle", `{"idle":true}`, "idle"},
		{"not json", `nope`, ""},
	}
	for _, c := range cases {
		got := DescribeState([]byte(c.state))
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if strings.Contains(got, "of .") || strings.HasSuffix(got, " of") || strings.Contains(got, "of  ") || strings.HasSuffix(got, " ") {
			t.Errorf("%s: empty title in %q", c.name, got)
		}
	}
}

// A refused service call keeps Home Assistant's own reason: it is what the
// person reads in the decided list.
func TestHassFailureKeepsHomeAssistantsReason(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"message":"Entity media_player.kitchen does not support this service."}`)
	}))
	defer srv.Close()
	h := newTestHass(t, srv.URL)
	p, err := h.Plan(Action{Capability: CapPause, Device: "kitchen"})
	if err != nil {
		t.Fatal(err)
	}
	err = h.Do(context.Background(), p)
	if err == nil || !strings.Contains(err.Error(), "400 Bad Request") ||
		!strings.Contains(err.Error(), "Home Assistant says: Entity media_player.kitchen does not support this service.") {
		t.Fatalf("error %v", err)
	}
	if IsTransient(err) {
		t.Fatal("a 400 is final")
	}
}
