package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/vigil-dev/vigil/internal/testbin"
	"github.com/vigil-dev/vigil/internal/testwait"
)

// serveScrape reads /metrics over HTTP: counters by "action/status", and
// each action's histogram as cumulative counts by upper bound.
func serveScrape(t *testing.T, url string) (map[string]float64, map[string]map[float64]uint64, float64) {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	lbl := func(m *dto.Metric, n string) string {
		for _, l := range m.GetLabel() {
			if l.GetName() == n {
				return l.GetValue()
			}
		}
		return ""
	}
	counts := map[string]float64{}
	for _, m := range fams["abos_executor_requests_total"].GetMetric() {
		counts[lbl(m, "action")+"/"+lbl(m, "status")] = m.GetCounter().GetValue()
	}
	hist := map[string]map[float64]uint64{}
	for _, m := range fams["abos_executor_duration_seconds"].GetMetric() {
		b := map[float64]uint64{}
		for _, bk := range m.GetHistogram().GetBucket() {
			if !math.IsInf(bk.GetUpperBound(), 1) {
				b[bk.GetUpperBound()] = bk.GetCumulativeCount()
			}
		}
		b[math.Inf(1)] = m.GetHistogram().GetSampleCount()
		hist[lbl(m, "action")] = b
	}
	pending := -1.0
	if f := fams["abos_executor_approvals_pending"]; f != nil {
		pending = f.GetMetric()[0].GetGauge().GetValue()
	}
	return counts, hist, pending
}

// A scripted sequence against a running `vigil serve` — an execution, a
// denial, a device failure, a rejection and an expiry that only serve is
// there to carry out — then /metrics over HTTP, exactly; and the [notify]
// command is run for the task that waited.
func TestServeMetricsAfterScriptedSequence(t *testing.T) {
	testbin.FullRunOnly(t, "runs a real vigil serve through a scripted sequence")
	h := newCrashHome(t, testbin.Vigil(t))
	notified := filepath.Join(t.TempDir(), "notified")
	script := filepath.Join(t.TempDir(), "notify.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nIFS='|'; printf '%s\\n' \"$*\" >> "+notified+"\n"), 0o700)
	cfg := `[[leases.keys]]
kid = "local"
alg = "EdDSA"
public_key = "keys/issuer.pub.pem"

[[devices]]
id = "living-room"
driver = "sim"

[approvals]
timeout = "3s"

[notify]
command = ["` + script + `", "{event}", "{agent}", "{action}", "{device}", "{task_id}"]
timeout = "2s"
`
	os.WriteFile(filepath.Join(h.home, "config.toml"), []byte(cfg), 0o600)
	manifest := func(id, capID string, inputs map[string]any) string {
		tok := strings.TrimSpace(h.must(0, "lease", "issue", "--sub", "agent:crash", "--task-id", id, "--cap", capID, "--ttl", "30m"))
		b, _ := json.Marshal(map[string]any{"task_id": id, "capability_id": capID, "lease": tok, "inputs": inputs})
		p := filepath.Join(h.home, id+".json")
		os.WriteFile(p, b, 0o600)
		return p
	}
	sc := h.startServe()
	// nothing plays yet: the device refuses the seek (failed)
	h.must(0, "submit", manifest("seek-1", "MEDIA_SEEK", map[string]any{"target_device": "living-room", "position_seconds": 3}))
	h.must(1, "approve", "seek-1", "--yes")
	h.must(0, "submit", h.manifest("play-1", "30m"))
	h.must(0, "approve", "play-1", "--yes")
	h.must(0, "submit", h.manifest("deny-1", "30m"))
	h.must(0, "deny", "deny-1", "--reason", "not now")
	bad := filepath.Join(h.home, "bad.json")
	os.WriteFile(bad, []byte(`{"task_id":"bad-1","capability_id":"MEDIA_PLAY","inputs":{},"lease":"x.y.z"}`), 0o600)
	h.must(2, "submit", bad)
	h.must(0, "submit", h.manifest("late-1", "30m"))
	h.waitEvent("late-1", "expired", 8*time.Second) // nobody but serve is running

	want := map[string]float64{"MEDIA_SEEK/failed": 1, "MEDIA_PLAY/executed": 1, "MEDIA_PLAY/denied": 1,
		"MEDIA_PLAY/rejected": 1, "MEDIA_PLAY/expired": 1}
	var counts map[string]float64
	var hist map[string]map[float64]uint64
	var pending float64
	testwait.For(t, 10*time.Second, func() error {
		counts, hist, pending = serveScrape(t, sc.url)
		same := len(counts) == len(want) && pending == 0
		for k, v := range want {
			same = same && counts[k] == v
		}
		if !same || len(hist) != 2 {
			return fmt.Errorf("counters %v, want %v; pending %v; histograms %v", counts, want, pending, hist)
		}
		return nil
	})
	// one execution each, on a simulated device: well under a second
	for _, action := range []string{"MEDIA_PLAY", "MEDIA_SEEK"} {
		b := hist[action]
		for _, le := range []float64{1, 2, 5, 10, math.Inf(1)} {
			if b[le] != 1 {
				t.Fatalf("%s: bucket le=%v holds %d, want 1 (%v)", action, le, b[le], b)
			}
		}
	}
	if code := sc.stop(t); code != 0 {
		t.Fatalf("serve exit %d\n%s", code, sc.stderr.String())
	}
	b, _ := os.ReadFile(notified)
	// late-1 is told as itself, or with tasks that came in the same few
	// seconds (a burst: event "several", their ids)
	told := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, "|")
		told = told || (len(f) == 5 && (f[0] == "arrived" && line == "arrived|agent:crash|MEDIA_PLAY|living-room|late-1" ||
			f[0] == "several" && slices.Contains(strings.Fields(f[4]), "late-1")))
	}
	if !told {
		t.Fatalf("notify command calls:\n%s\nserve:\n%s", b, sc.stderr.String())
	}
	h.checkInvariants("after the scripted sequence")
}
