package natsqueue_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/grants"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/natsqueue"
)

// grantRig is a rig whose executor mints for kitchen-bot, which may pause
// the living room; others has no grants.
func grantRig(t *testing.T) *rig {
	t.Helper()
	s := startServer(t, nil)
	env := approvaltest.New(t)
	g := &grants.Grants{Devices: []string{"living-room"}, Key: env.Issuer, KID: lease.LocalIssuerKID,
		Agents: []config.AgentConfig{
			{Name: "kitchen-bot", Grants: []config.GrantConfig{{Capabilities: []string{"MEDIA_PAUSE"}, Devices: []string{"living-room"}}}},
			{Name: "other"},
		}}
	return newRigWith(t, s.ClientURL(), env, func(o *natsqueue.ExecutorOptions) { o.Grants, o.Now = g, env.Clock.Now })
}

// publishAs sends raw as the named agent (its own subject; "" the shared
// one) and waits for the verdict.
func (r *rig) publishAs(agent string, raw []byte) natsqueue.Verdict {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := natsqueue.NewClient(ctx, r.js)
	if err != nil {
		r.t.Fatal(err)
	}
	c.Agent = agent
	d, err := c.Publish(ctx, raw)
	if err != nil {
		r.t.Fatal(err)
	}
	v, err := c.Verdict(ctx, d)
	if err != nil {
		r.t.Fatal(err)
	}
	return v
}

func unleased(id, capID string) []byte {
	b, _ := json.Marshal(map[string]any{"task_id": id, "capability_id": capID,
		"inputs": map[string]any{"target_device": "living-room"}})
	return b
}

// TestAgentSubjectWithoutLeaseIsMintedUnderItsGrant: on its own subject,
// a granted agent's manifest without a lease becomes a pending task of
// that agent, its minted lease audited before the submission; one no grant
// covers, or from an agent with none, is refused INVALID_LEASE naming what
// is not granted, and nothing is submitted.
func TestAgentSubjectWithoutLeaseIsMintedUnderItsGrant(t *testing.T) {
	r := grantRig(t)
	v := r.publishAs("kitchen-bot", unleased("pause-1", "MEDIA_PAUSE"))
	if v.State != "pending" || v.Error != nil {
		t.Fatalf("granted pause: %+v", v)
	}
	rec, err := r.env.Queue.Get("pause-1")
	if err != nil || rec.Agent != "agent:kitchen-bot" {
		t.Fatalf("the task's agent: %q (%v), want agent:kitchen-bot", rec.Agent, err)
	}
	ev := strings.Join(r.env.Events(), " ")
	if !strings.Contains(ev, "lease_issued submitted") {
		t.Fatalf("audit: %s, want lease_issued then submitted", ev)
	}

	for _, c := range []struct{ agent, id, capID, want string }{
		{"kitchen-bot", "stop-1", "MEDIA_STOP", "agent kitchen-bot has no grant for MEDIA_STOP on living-room"},
		{"other", "pause-2", "MEDIA_PAUSE", "agent other has no grant for MEDIA_PAUSE on living-room"},
		{"stranger", "pause-3", "MEDIA_PAUSE", "agent stranger has no grant"},
	} {
		v := r.publishAs(c.agent, unleased(c.id, c.capID))
		if v.State != "rejected" || v.Error == nil || v.Error.Code != "INVALID_LEASE" || !strings.Contains(v.Error.Message, c.want) {
			t.Fatalf("%s %s: %+v, want INVALID_LEASE naming %q", c.agent, c.capID, v, c.want)
		}
		if _, err := r.env.Queue.Get(c.id); err == nil {
			t.Fatalf("%s: a refused manifest made a task", c.id)
		}
	}
	if n := strings.Count(strings.Join(r.env.Events(), " "), "rejected"); n != 3 {
		t.Fatalf("audit: %d rejections, want 3: %q", n, r.env.Events())
	}
}

// TestAgentSubjectWithLeaseAndSharedSubjectAreAsBefore: a lease an agent
// brings on its own subject is verified as any (a forged one is refused);
// on the shared subjects nothing is minted.
func TestAgentSubjectWithLeaseAndSharedSubjectAreAsBefore(t *testing.T) {
	r := grantRig(t)
	if v := r.publishAs("kitchen-bot", r.env.Play("play-1", "/media/a.mkv")); v.State != "pending" {
		t.Fatalf("a leased manifest on the agent's subject: %+v", v)
	}
	if rec, _ := r.env.Queue.Get("play-1"); rec.Agent != "agent:planner" {
		t.Fatalf("the task's agent is the lease's: %q", rec.Agent)
	}
	var m map[string]any
	_ = json.Unmarshal(r.env.Play("play-2", "/media/b.mkv"), &m)
	m["lease"] = m["lease"].(string) + "x"
	forged, _ := json.Marshal(m)
	if v := r.publishAs("kitchen-bot", forged); v.State != "rejected" || v.Error.Code != "INVALID_LEASE" {
		t.Fatalf("a forged lease on the agent's subject: %+v", v)
	}
	v := r.publishAs("", unleased("pause-9", "MEDIA_PAUSE"))
	if v.State != "rejected" || v.Error.Code != "INVALID_LEASE" {
		t.Fatalf("no lease on the shared subject: %+v", v)
	}
	if strings.Contains(strings.Join(r.env.Events(), " "), "lease_issued") {
		t.Fatalf("a lease was minted off an agent's subject: %q", r.env.Events())
	}
}

func TestAgentSubjectForNamesTheDeviceAndTheAgent(t *testing.T) {
	got := natsqueue.AgentSubjectFor("living-room", "kitchen.bot")
	if got != natsqueue.DeviceSubject("living-room")+".agent.a2l0Y2hlbi5ib3Q" {
		t.Fatalf("AgentSubjectFor: %q", got)
	}
}

// TestAgentsOwnSubjectIsItsAlone: with the documented permissions,
// kitchen-bot submits without a lease on its own subject and the executor
// mints for it; ci-agent, on the shared agents' permissions, may not
// publish there (so it cannot be minted for as kitchen-bot), and nothing
// it tried reached the executor.
func TestAgentsOwnSubjectIsItsAlone(t *testing.T) {
	s := permServer(t)
	url := s.ClientURL()
	env := approvaltest.New(t)
	g := &grants.Grants{Devices: []string{"living-room"}, Key: env.Issuer, KID: lease.LocalIssuerKID,
		Agents: []config.AgentConfig{{Name: "kitchen-bot",
			Grants: []config.GrantConfig{{Capabilities: []string{"MEDIA_PAUSE"}, Devices: []string{"living-room"}}}}}}
	exe := connectAs(t, url, "executor", natsqueue.RoleExecutor)
	if _, err := startExecutorWith(t, natsqueue.ExecutorOptions{JS: exe.js, Queue: env.Queue, AuditPath: env.AuditPath(),
		Host: "exec-a-host", Devices: []string{"living-room"}, ID: "exec-a", Grants: g, Now: env.Clock.Now}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	bot := connectAs(t, url, "kitchen-bot", natsqueue.RoleAgent)
	bc, err := natsqueue.NewClient(ctx, bot.js)
	if err != nil {
		t.Fatal(err)
	}
	bc.Agent = "kitchen-bot"
	d, err := bc.Publish(ctx, unleased("bot-1", "MEDIA_PAUSE"))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := bc.Verdict(ctx, d); err != nil || v.State != "pending" {
		t.Fatalf("kitchen-bot on its subject: %+v %v", v, err)
	}
	if rec, err := env.Queue.Get("bot-1"); err != nil || rec.Agent != "agent:kitchen-bot" {
		t.Fatalf("the task's agent: %q %v", rec.Agent, err)
	}
	if v := bot.seen(); len(v) != 0 {
		t.Fatalf("kitchen-bot was refused something it needs: %q", v)
	}

	ci := connectAs(t, url, "ci-agent", natsqueue.RoleAgent)
	cc, err := natsqueue.NewClient(ctx, ci.js)
	if err != nil {
		t.Fatal(err)
	}
	cc.Agent = "kitchen-bot"
	sctx, scancel := short()
	defer scancel()
	if _, err := cc.Publish(sctx, unleased("ci-1", "MEDIA_PAUSE")); err == nil {
		t.Fatal("ci-agent published on kitchen-bot's subject")
	}
	ci.refused("ci-agent on kitchen-bot's subject", natsqueue.AgentSubjectFor("living-room", "kitchen-bot"))
	if _, err := env.Queue.Get("ci-1"); err == nil {
		t.Fatal("ci-agent's manifest reached the executor")
	}
}
