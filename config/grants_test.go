package config

import (
	"strings"
	"testing"
	"time"
)

const grantDevices = `[[devices]]
id = "kitchen"
driver = "sim"
[[devices]]
id = "living-room"
driver = "sim"
`

// grantAgent is an agent with the grant tables given after its keys.
func grantAgent(extra string) string {
	return grantDevices + `
[[agents]]
name = "claude-home"
token_env = "CLAUDE_TOKEN"
` + extra
}

func TestGrantsLoad(t *testing.T) {
	cfg, err := Load(write(t, grantAgent(`lease_ttl = "5m"
[[agents.grants]]
capabilities = ["MEDIA_PAUSE", "MEDIA_STOP"]
devices = ["kitchen", "living-room"]
[[agents.grants]]
capabilities = ["MEDIA_PLAY"]
devices = ["living-room"]
media_hosts = ["media.example.com", "*.cdn.example"]
`)), "/")
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Agents[0]
	if a.EffectiveLeaseTTL() != 5*time.Minute || len(a.Grants) != 2 {
		t.Fatalf("agent: %+v", a)
	}
	g := a.Grants[1]
	if g.Capabilities[0] != "MEDIA_PLAY" || g.Devices[0] != "living-room" || g.MediaHosts[1] != "*.cdn.example" {
		t.Fatalf("grant: %+v", g)
	}
	if d := (AgentConfig{}).EffectiveLeaseTTL(); d != 15*time.Minute {
		t.Fatalf("default lease_ttl: %s", d)
	}
}

func TestGrantCovers(t *testing.T) {
	pause := GrantConfig{Capabilities: []string{"MEDIA_PAUSE"}, Devices: []string{"kitchen"}}
	play := GrantConfig{Capabilities: []string{"MEDIA_PLAY"}, Devices: []string{"kitchen"}, MediaHosts: []string{"media.example.com"}}
	never := func([]string) bool { t.Error("hosts matched for a capability that fetches nothing"); return false }
	yes := func([]string) bool { return true }
	no := func([]string) bool { return false }
	for _, c := range []struct {
		name       string
		g          GrantConfig
		capID, dev string
		hosts      func([]string) bool
		want       bool
	}{
		{"granted pause", pause, "MEDIA_PAUSE", "kitchen", never, true},
		{"other device", pause, "MEDIA_PAUSE", "living-room", never, false},
		{"other capability", pause, "MEDIA_STOP", "kitchen", never, false},
		{"play from a granted host", play, "MEDIA_PLAY", "kitchen", yes, true},
		{"play from another host", play, "MEDIA_PLAY", "kitchen", no, false},
		{"case is not folded", pause, "media_pause", "kitchen", never, false},
	} {
		if got := c.g.Covers(c.capID, c.dev, c.hosts); got != c.want {
			t.Errorf("%s: Covers = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestGrantErrorsNameTheKeyAndRule(t *testing.T) {
	pause := "[[agents.grants]]\ncapabilities = [\"MEDIA_PAUSE\"]\ndevices = [\"kitchen\"]\n"
	for _, c := range []struct{ extra, want string }{
		{"lease_ttl = \"25h\"\n", "agents[0].lease_ttl: must be between 1s and 24h0m0s, got 25h0m0s"},
		{"lease_ttl = \"-1m\"\n", "agents[0].lease_ttl: must be between 1s and 24h0m0s"},
		{"lease_ttl = \"500ms\"\n", "agents[0].lease_ttl: must be at least 1s"},
		{pause + "[[agents.grants]]\ndevices = [\"kitchen\"]\n", "agents[0].grants[1].capabilities: at least one capability is required"},
		{pause + "[[agents.grants]]\ncapabilities = [\"MEDIA_*\"]\ndevices = [\"kitchen\"]\n", `agents[0].grants[1].capabilities[0]: must be one of MEDIA_PLAY, MEDIA_PAUSE, MEDIA_STOP, MEDIA_SEEK (written out, no globs), got "MEDIA_*"`},
		{pause + "[[agents.grants]]\ncapabilities = [\"SEARCH_FILES\"]\ndevices = [\"kitchen\"]\n", `agents[0].grants[1].capabilities[0]: must be one of`},
		{pause + "[[agents.grants]]\ncapabilities = [\"MEDIA_STOP\"]\n", "agents[0].grants[1].devices: at least one [[devices]] id is required"},
		{pause + "[[agents.grants]]\ncapabilities = [\"MEDIA_STOP\"]\ndevices = [\"kitchen\", \"garage\"]\n", `agents[0].grants[1].devices[1]: must be a [[devices]] id (kitchen, living-room), got "garage"`},
		{pause + "[[agents.grants]]\ncapabilities = [\"MEDIA_PLAY\"]\ndevices = [\"kitchen\"]\n", `agents[0].grants[1].media_hosts: a grant with MEDIA_PLAY must name the hosts`},
		{pause + "[[agents.grants]]\ncapabilities = [\"MEDIA_STOP\"]\ndevices = [\"kitchen\"]\nmedia_hosts = [\"a.example\"]\n", "agents[0].grants[1].media_hosts: only MEDIA_PLAY fetches media"},
		{pause + "[[agents.grants]]\ncapabilities = [\"MEDIA_PLAY\"]\ndevices = [\"kitchen\"]\nmedia_hosts = [\"a.example\", \"\"]\n", "agents[0].grants[1].media_hosts[1]: must not be empty"},
		{pause + "[[agents.grants]]\ncapabilities = [\"MEDIA_PLAY\"]\ndevices = [\"kitchen\"]\nmedia_hosts = [\"[a\"]\n", "agents[0].grants[1].media_hosts[0]: is not a glob"},
		{pause + "[[agents.grants]]\ncapabilities = [\"MEDIA_PLAY\"]\ndevices = [\"kitchen\"]\nmedia_hosts = [\"Media.Example.com\"]\n", "agents[0].grants[1].media_hosts[0]: must be lower-case"},
		{pause + "[[agents.grants]]\ncapabilities = [\"MEDIA_PLAY\"]\ndevices = [\"kitchen\"]\nmedia_hosts = [\"https://media.example.com\"]\n", "agents[0].grants[1].media_hosts[0]: must be a host name, not a URL"},
		{pause + "[[agents.grants]]\ncapabilities = [\"MEDIA_PLAY\"]\ndevices = [\"kitchen\"]\nmedia_hosts = [\"bücher.example\"]\n", "agents[0].grants[1].media_hosts[0]: must be written in ASCII"},
		{pause + "[[agents.grants]]\ncapabilities = [\"MEDIA_PAUSE\"]\ndevices = [\"kitchen\"]\nwhen = \"hour > 7\"\n", "unknown key"},
	} {
		_, err := Load(write(t, grantAgent(c.extra)), "/")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant …%s…", c.extra, err, c.want)
		}
	}
}
