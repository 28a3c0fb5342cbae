package rules

import (
	"strings"
	"testing"
	"time"
)

func TestLikeTask(t *testing.T) {
	h := newStoreHome(t)
	s := h.open(t)
	now := h.clock.Now()
	by := Actor{By: "operator:ada", Via: "tui"}
	odd := Facts{Agent: "bot[1]*", Capability: "MEDIA_PLAY", Device: "kitchen", MediaHost: "media.example.com"}
	req, err := LikeTask(odd, Allow, 15*time.Minute, now, "like this", by)
	if err != nil {
		t.Fatal(err)
	}
	if got := Describe(req, now); !strings.HasPrefix(got, `allow MEDIA_PLAY by bot\[1\]\* on kitchen from media.example.com, until `) || !strings.HasSuffix(got, "(15m0s)") {
		t.Fatalf("describe: %q", got)
	}
	if _, err := s.Add(req, nil); err != nil {
		t.Fatal(err)
	}
	live, err := NewLive(nil, s, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	other := odd
	other.Agent = "bot1x" // would match the glob bot[1]* unescaped
	for _, c := range []struct {
		f    Facts
		want Decision
	}{
		{odd, Allow}, {other, Ask},
		{Facts{Agent: odd.Agent, Capability: "MEDIA_PLAY", Device: "kitchen", MediaHost: "ads.example.com"}, Ask},
		{Facts{Agent: odd.Agent, Capability: "MEDIA_PLAY", Device: "living-room", MediaHost: "media.example.com"}, Ask},
		{Facts{Agent: odd.Agent, Capability: "MEDIA_STOP", Device: "kitchen"}, Ask},
	} {
		if v := live.Decide(c.f, now); v.Decision != c.want {
			t.Errorf("%+v: %s (%s), want %s", c.f, v.Decision, v.Reason, c.want)
		}
	}
	ur, err := LikeTask(odd, Deny, UntilRestart, now, "tonight", by)
	if err != nil || !ur.UntilRestart || !strings.HasSuffix(Describe(ur, now), ", until Vigil restarts") {
		t.Fatalf("until restart: %+v %v %q", ur, err, Describe(ur, now))
	}
	if _, err := s.Add(ur, nil); err == nil || !strings.Contains(err.Error(), "no vigil serve is running") {
		t.Fatalf("until restart with no serve: %v", err)
	}
	for _, c := range []struct {
		f    Facts
		d    Decision
		want string
	}{
		{Facts{Capability: "MEDIA_STOP", Device: "kitchen"}, Deny, "names no agent"},
		{Facts{Agent: "a", Capability: "MEDIA_PLAY", Device: "kitchen"}, Allow, "would allow playing from any host"},
		{Facts{Agent: "a", Capability: "MEDIA_STOP", Device: "kitchen", Warnings: []string{"media_uri look-alike"}}, Allow, "preview warns"},
	} {
		if _, err := LikeTask(c.f, c.d, time.Hour, now, "x", by); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.f, err, c.want)
		}
	}
}
