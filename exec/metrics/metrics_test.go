package metrics

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
)

// scrape GETs /metrics over real HTTP and parses the text format.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// counters maps "action/status" to the counter's value.
func counters(t *testing.T, fams map[string]*dto.MetricFamily) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	f := fams[RequestsTotal]
	if f == nil {
		return out
	}
	if f.GetType() != dto.MetricType_COUNTER {
		t.Fatalf("%s is a %s", RequestsTotal, f.GetType())
	}
	for _, m := range f.GetMetric() {
		out[label(m, "action")+"/"+label(m, "status")] = m.GetCounter().GetValue()
	}
	return out
}

// buckets returns the cumulative bucket counts of action's histogram, in
// seed 003's bucket order, and its sample count.
func buckets(t *testing.T, fams map[string]*dto.MetricFamily, action string) ([]uint64, uint64) {
	t.Helper()
	f := fams[DurationSeconds]
	if f == nil {
		t.Fatalf("no %s", DurationSeconds)
	}
	for _, m := range f.GetMetric() {
		if label(m, "action") != action {
			continue
		}
		h := m.GetHistogram()
		var got []uint64
		for i, b := range h.GetBucket() {
			if i == len(Buckets) && math.IsInf(b.GetUpperBound(), 1) {
				break // the parser lists +Inf too
			}
			if i >= len(Buckets) || b.GetUpperBound() != Buckets[i] {
				t.Fatalf("bucket %d bound %v, want %v", i, b.GetUpperBound(), Buckets[i])
			}
			got = append(got, b.GetCumulativeCount())
		}
		return got, h.GetSampleCount()
	}
	t.Fatalf("no histogram for action %q", action)
	return nil, 0
}

func equal(t *testing.T, what string, got, want map[string]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s: got %v, want %v", what, got, want)
		}
	}
}

func serveMetrics(t *testing.T, m *Metrics, health func() error) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler(health))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A scripted sequence through the real queue: submits, approvals (one of
// which fails on the device), a denial, an expiry, a rejection.
func TestScrapeAfterScriptedQueue(t *testing.T) {
	env := approvaltest.New(t)
	ctx := context.Background()
	q := env.Queue
	decide := func(id string, approve bool) {
		t.Helper()
		if _, _, err := q.Decide(ctx, id, approval.Decision{Approve: approve, By: "operator:test", Reason: "no", Via: "cli"}); err != nil {
			t.Fatalf("decide %s: %v", id, err)
		}
	}
	env.Submit(env.Play("play-1", "/media/a.mkv"))
	env.Submit(env.Play("play-2", "/media/b.mkv"))
	env.Submit(env.Manifest("pause-1", "MEDIA_PAUSE", map[string]any{"target_device": "living-room"}, 30*time.Minute))
	env.Submit(env.Manifest("stop-1", "MEDIA_STOP", map[string]any{"target_device": "living-room"}, 30*time.Minute))
	decide("play-1", true)
	decide("play-2", false)
	decide("stop-1", true) // the sim stops fine: executed
	env.Submit(env.Manifest("seek-1", "MEDIA_SEEK", map[string]any{"target_device": "living-room", "position_seconds": 5}, 30*time.Minute))
	env.Submit(env.Manifest("stop-2", "MEDIA_STOP", map[string]any{"target_device": "living-room"}, 30*time.Minute))
	decide("stop-2", true)
	decide("seek-1", true) // nothing plays after the stop: the device refuses, failed
	if out := env.Submit([]byte(`{"task_id":"bad-1","capability_id":"MEDIA_PLAY","inputs":{},"lease":"x.y.z"}`)); out.State != "rejected" {
		t.Fatalf("bad-1: %+v", out)
	}
	env.Clock.Advance(11 * time.Minute)
	if err := q.Reconcile(ctx); err != nil { // pause-1 expires
		t.Fatal(err)
	}
	env.Submit(env.Play("play-3", "/media/c.mkv")) // still pending
	pending, err := q.Pending()
	if err != nil {
		t.Fatal(err)
	}

	m := New(Build{Version: "1.2.3", Commit: "abc", GoVersion: "go1.x"})
	if err := m.Follow(env.AuditPath()); err != nil {
		t.Fatal(err)
	}
	m.SetPending(len(pending))
	url := serveMetrics(t, m, func() error { return nil })
	fams := scrape(t, url)
	equal(t, RequestsTotal, counters(t, fams), map[string]float64{
		"MEDIA_PLAY/executed": 1, "MEDIA_PLAY/denied": 1, "MEDIA_STOP/executed": 2,
		"MEDIA_SEEK/failed": 1, "MEDIA_PAUSE/expired": 1, "MEDIA_PLAY/rejected": 1,
	})
	if g := fams[ApprovalPending].GetMetric()[0].GetGauge().GetValue(); g != 1 {
		t.Fatalf("%s = %v, want 1", ApprovalPending, g)
	}
	// the clock stood still during each execution: every one took 0 s
	for action, n := range map[string]uint64{"MEDIA_PLAY": 1, "MEDIA_STOP": 2, "MEDIA_SEEK": 1} {
		got, count := buckets(t, fams, action)
		if count != n || len(got) != 6 || got[0] != n || got[5] != n {
			t.Fatalf("%s: buckets %v count %d, want all %d", action, got, count, n)
		}
	}
	if _, ok := fams["go_goroutines"]; !ok {
		t.Error("no Go collector")
	}
	if _, ok := fams["process_open_fds"]; !ok {
		t.Error("no process collector")
	}
	bi := fams[BuildInfo].GetMetric()[0]
	if label(bi, "version") != "1.2.3" || label(bi, "commit") != "abc" || bi.GetGauge().GetValue() != 1 {
		t.Fatalf("build info %v", bi)
	}

	// another process decides; following the log picks it up, nothing twice
	other := env.Open()
	if _, _, err := other.Decide(ctx, "play-3", approval.Decision{Approve: true, By: "operator:tui", Via: "tui"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Follow(env.AuditPath()); err != nil {
		t.Fatal(err)
	}
	c := counters(t, scrape(t, url))
	if c["MEDIA_PLAY/executed"] != 2 || c["MEDIA_STOP/executed"] != 2 || c["MEDIA_PLAY/denied"] != 1 {
		t.Fatalf("after a decision elsewhere: %v", c)
	}
}

// Durations come from the log's times: approved → executed/failed.
func TestDurationBucketsFromLogTimes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	clock := approvaltest.NewClock()
	log, err := audit.Open(path, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	add := func(e audit.Entry) {
		t.Helper()
		if _, err := log.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	// executions taking 0, 1, 2, 3, 7 and 12 seconds
	for i, secs := range []int{0, 1, 2, 3, 7, 12} {
		id := "t" + string(rune('a'+i))
		add(audit.Entry{Actor: "operator:x", Event: audit.EventApproved, TaskID: id, Capability: "MEDIA_PLAY", Success: true})
		clock.Advance(time.Duration(secs) * time.Second)
		ev := audit.EventExecuted
		if secs == 7 {
			ev = audit.EventFailed
		}
		add(audit.Entry{Actor: "vigil", Event: ev, TaskID: id, Capability: "MEDIA_PLAY", Success: ev == audit.EventExecuted})
	}
	// a failure at decision time (no approved entry) counts but is not timed
	add(audit.Entry{Actor: "operator:x", Event: audit.EventFailed, TaskID: "tz", Capability: "MEDIA_PLAY", ErrorCode: "INVALID_LEASE"})
	// a capability Vigil does not run keeps the label set bounded
	add(audit.Entry{Actor: "agent:?", Event: audit.EventRejected, TaskID: "tr", Capability: "SHELL_EXEC_\x1b[31m", ErrorCode: "UNSUPPORTED_CAPABILITY"})
	add(audit.Entry{Actor: "vigil", Event: "tampered", TaskID: "tt", Capability: "MEDIA_STOP"})
	add(audit.Entry{Actor: "agent:a", Event: audit.EventSearched, TaskID: "s1", Capability: "SEARCH_FILES", Success: true})
	add(audit.Entry{Actor: "operator:x", Event: audit.EventSealed})

	m := New(Build{})
	if err := m.Follow(path); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, serveMetrics(t, m, func() error { return nil }))
	got, count := buckets(t, fams, "MEDIA_PLAY")
	// cumulative: ≤0.1: 0s; ≤0.5: same; ≤1: +1s; ≤2: +2s; ≤5: +3s; ≤10: +7s; the 12s only in +Inf
	want := []uint64{1, 1, 2, 3, 4, 5}
	if count != 6 || len(got) != len(want) {
		t.Fatalf("buckets %v count %d", got, count)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("buckets %v, want %v", got, want)
		}
	}
	for _, m := range fams[DurationSeconds].GetMetric() {
		if label(m, "action") == "MEDIA_PLAY" && m.GetHistogram().GetSampleSum() != 25 {
			t.Fatalf("sum %v, want 25", m.GetHistogram().GetSampleSum())
		}
	}
	equal(t, RequestsTotal, counters(t, fams), map[string]float64{
		"MEDIA_PLAY/executed": 5, "MEDIA_PLAY/failed": 2, "other/rejected": 1, "MEDIA_STOP/tampered": 1,
		"SEARCH_FILES/executed": 1,
	})
}

// A log replaced under the follower (restored from a backup, rewritten by
// hand) is counted again from its start, never added on top.
func TestFollowRecountsAReplacedLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	clock := approvaltest.NewClock()
	log, _ := audit.Open(path, clock.Now)
	for _, id := range []string{"a", "b", "c"} {
		log.Append(audit.Entry{Actor: "x", Event: audit.EventDenied, TaskID: id, Capability: "MEDIA_PLAY"})
	}
	m := New(Build{})
	if err := m.Follow(path); err != nil {
		t.Fatal(err)
	}
	url := serveMetrics(t, m, func() error { return nil })
	if c := counters(t, scrape(t, url)); c["MEDIA_PLAY/denied"] != 3 {
		t.Fatalf("got %v", c)
	}
	// appended: counted once
	log.Append(audit.Entry{Actor: "x", Event: audit.EventExpired, TaskID: "d", Capability: "MEDIA_PLAY"})
	m.Follow(path)
	m.Follow(path)
	if c := counters(t, scrape(t, url)); c["MEDIA_PLAY/denied"] != 3 || c["MEDIA_PLAY/expired"] != 1 {
		t.Fatalf("got %v", c)
	}
	// replaced by a different, longer log
	other := filepath.Join(dir, "other.log")
	olog, _ := audit.Open(other, clock.Now)
	for _, id := range []string{"x", "y", "z", "w", "v"} {
		olog.Append(audit.Entry{Actor: "x", Event: audit.EventExpired, TaskID: id, Capability: "MEDIA_STOP"})
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	if err := m.Follow(path); err != nil {
		t.Fatal(err)
	}
	equal(t, "replaced", counters(t, scrape(t, url)), map[string]float64{"MEDIA_STOP/expired": 5})
}

// A log rewritten in place (the same file, longer, its last read line now
// another entry) is the follower's cut: counted again from its start, never
// added on top; what is appended after is counted once.
func TestFollowRecountsALogRewrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	clock := approvaltest.NewClock()
	log, _ := audit.Open(path, clock.Now)
	for _, id := range []string{"a", "b"} {
		log.Append(audit.Entry{Actor: "x", Event: audit.EventDenied, TaskID: id, Capability: "MEDIA_PLAY"})
	}
	m := New(Build{})
	if err := m.Follow(path); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.log")
	olog, _ := audit.Open(other, clock.Now)
	for _, id := range []string{"x", "y", "z"} {
		olog.Append(audit.Entry{Actor: "someone-else", Event: audit.EventExpired, TaskID: id, Capability: "MEDIA_STOP"})
	}
	b, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	// os.WriteFile truncates and writes the same file: only its bytes say it changed
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.Follow(path); err != nil {
		t.Fatal(err)
	}
	url := serveMetrics(t, m, func() error { return nil })
	equal(t, "rewritten", counters(t, scrape(t, url)), map[string]float64{"MEDIA_STOP/expired": 3})
	olog.Append(audit.Entry{Actor: "x", Event: audit.EventDenied, TaskID: "w", Capability: "MEDIA_STOP"})
	b, _ = os.ReadFile(other)
	os.WriteFile(path, b, 0o600)
	m.Follow(path)
	m.Follow(path)
	equal(t, "appended", counters(t, scrape(t, url)), map[string]float64{"MEDIA_STOP/expired": 3, "MEDIA_STOP/denied": 1})
}

func TestHealthz(t *testing.T) {
	m := New(Build{})
	var why error
	url := serveMetrics(t, m, func() error { return why })
	get := func() (int, string) {
		resp, err := http.Get(url + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(); code != 200 || body != "ok\n" {
		t.Fatalf("%d %q", code, body)
	}
	why = os.ErrPermission
	if code, body := get(); code != 503 || !strings.Contains(body, "permission denied") {
		t.Fatalf("%d %q", code, body)
	}
}

// With a Timer, durations come from the records' precise times; a record
// not final yet is asked again on later Follow calls, and after maxTries
// the log's whole seconds are used.
func TestDurationsFromRecordsWhenReadable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	clock := approvaltest.NewClock()
	log, _ := audit.Open(path, clock.Now)
	for _, id := range []string{"fast", "mid", "late", "never"} {
		log.Append(audit.Entry{Actor: "x", Event: audit.EventApproved, TaskID: id, Capability: "MEDIA_STOP", Success: true})
		clock.Advance(3 * time.Second)
		log.Append(audit.Entry{Actor: "vigil", Event: audit.EventExecuted, TaskID: id, Capability: "MEDIA_STOP", Success: true})
	}
	t0 := time.Unix(0, 0)
	ready := map[string]time.Duration{"fast": 80 * time.Millisecond, "mid": 300 * time.Millisecond}
	m := New(Build{})
	m.SetTimer(func(id string) (time.Time, time.Time, bool) {
		d, ok := ready[id]
		return t0, t0.Add(d), ok
	})
	m.Follow(path)
	url := serveMetrics(t, m, func() error { return nil })
	got, count := buckets(t, scrape(t, url), "MEDIA_STOP")
	if count != 2 || got[0] != 1 || got[1] != 2 || got[5] != 2 {
		t.Fatalf("first follow: buckets %v count %d", got, count)
	}
	ready["late"] = 1500 * time.Millisecond // its record is written now
	m.Follow(path)
	got, count = buckets(t, scrape(t, url), "MEDIA_STOP")
	if count != 3 || got[2] != 2 || got[3] != 3 {
		t.Fatalf("second follow: buckets %v count %d", got, count)
	}
	for i := 0; i < maxTries; i++ {
		m.Follow(path)
	}
	got, count = buckets(t, scrape(t, url), "MEDIA_STOP")
	// "never" falls back to the log: 3 s, in the ≤5 bucket
	if count != 4 || got[3] != 3 || got[4] != 4 {
		t.Fatalf("after giving up: buckets %v count %d", got, count)
	}
	if c := counters(t, scrape(t, url)); c["MEDIA_STOP/executed"] != 4 {
		t.Fatalf("counters %v", c)
	}
}

// Decisions are counted by who made them: a rule (actor rule:<id>) or a
// person (any operator), approvals and denials apart.
func TestDecisionsCountedByPersonOrRule(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	log, err := audit.Open(path, approvaltest.NewClock().Now)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []audit.Entry{
		{Actor: "operator:ada", Event: audit.EventApproved, TaskID: "t1", Capability: "MEDIA_PLAY"},
		{Actor: "rule:kitchen-pause", Event: audit.EventApproved, TaskID: "t2", Capability: "MEDIA_PAUSE"},
		{Actor: "rule:kitchen-pause", Event: audit.EventApproved, TaskID: "t3", Capability: "MEDIA_PAUSE"},
		{Actor: "rule:no-ads", Event: audit.EventDenied, TaskID: "t4", Capability: "MEDIA_PLAY"},
		{Actor: "operator:bob", Event: audit.EventDenied, TaskID: "t5", Capability: "MEDIA_PLAY"},
		{Actor: "vigil", Event: audit.EventExpired, TaskID: "t6", Capability: "MEDIA_PLAY"},
	} {
		if _, err := log.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	m := New(Build{})
	if err := m.Follow(path); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, serveMetrics(t, m, func() error { return nil }))
	got := map[string]float64{}
	for _, c := range fams[DecisionsTotal].GetMetric() {
		got[label(c, "by")+"/"+label(c, "decision")] = c.GetCounter().GetValue()
	}
	equal(t, DecisionsTotal, got, map[string]float64{
		"person/approved": 1, "rule/approved": 2, "rule/denied": 1, "person/denied": 1,
	})
}
