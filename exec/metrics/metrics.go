// Package metrics exposes seed 003's executor metrics for Prometheus,
// counted from the audit log (so decisions taken by any process sharing the
// home show up), with Go, process and build-info collectors.
package metrics

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/media"
	"github.com/vigil-dev/vigil/exec/scope"
)

// Seed 003's metric names, and its histogram's buckets.
const (
	RequestsTotal   = "abos_executor_requests_total"
	DurationSeconds = "abos_executor_duration_seconds"
	ApprovalPending = "abos_executor_approvals_pending"
	BuildInfo       = "vigil_build_info"
	// DecisionsTotal counts decisions by who made them (by: DecidedByPerson
	// or DecidedByRule) and what they were (decision: approved, denied).
	DecisionsTotal = "vigil_decisions_total"
)

// The by label of DecisionsTotal.
const (
	DecidedByPerson = "person" // an operator: this account, over SSH, or a queue operator
	DecidedByRule   = "rule"   // a [[rules]] rule at submission (actor "rule:<id>")
)

// Buckets are seed 003's duration buckets, in seconds.
var Buckets = []float64{0.1, 0.5, 1, 2, 5, 10}

// Statuses of RequestsTotal: each request is counted once, when it ends,
// under the audit event that ended it.
const (
	StatusExecuted = "executed" // ran, and the device (or search) succeeded
	StatusFailed   = "failed"   // ran and failed, or failed at decision time (lease revoked, interrupted)
	StatusDenied   = "denied"   // a person said no
	StatusExpired  = "expired"  // APPROVAL_TIMEOUT or LEASE_EXPIRED before a decision
	StatusTampered = "tampered" // the stored request changed; nothing ran
	StatusRejected = "rejected" // refused at submission (bad lease, bad input, …)
)

// OtherAction is the action label of a capability Vigil does not execute
// (only rejections carry one): the label set stays bounded whatever agents send.
const OtherAction = "other"

// Build labels vigil_build_info.
type Build struct{ Version, Commit, GoVersion string }

// Metrics holds the registry and follows one audit log.
type Metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec
	decisions *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	pending   prometheus.Gauge

	mu       sync.Mutex
	follow   *audit.Follower // the log counted; it says when the log is not the one read before
	approved map[string]time.Time
	timer    Timer
	waiting  map[string]*waitingRun // ended executions whose precise span is not readable yet
}

// Timer gives an ended execution's precise span from the task's record: when
// it was approved and when it reached its final state (the audit log's times
// are whole seconds). ok is false while the record does not say yet (the
// outcome entry is logged just before the record's last write).
type Timer func(taskID string) (approved, finished time.Time, ok bool)

// waitingRun is an execution counted but not yet timed.
type waitingRun struct {
	action         string
	logFrom, logTo time.Time
	tries          int
}

// maxTries is how many Follow calls a run waits for its record before it is
// timed from the log's whole seconds instead.
const maxTries = 30

// maxOpen bounds the approvals waiting for their outcome that are kept to
// time executions (an approval whose outcome never comes is dropped first).
const maxOpen = 10000

// New registers seed 003's metrics, the Go and process collectors and
// vigil_build_info on a registry of its own (never the global one).
func New(b Build) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: RequestsTotal,
			Help: "Total executor requests, counted once when each ends (action = capability, status = outcome)"},
			[]string{"action", "status"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: DecisionsTotal,
			Help: "Decisions on tasks (by = person or rule, decision = approved or denied)"},
			[]string{"by", "decision"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: DurationSeconds,
			Help:    "Executor request duration: from the approval to the recorded outcome of each execution",
			Buckets: Buckets}, []string{"action"}),
		pending:  prometheus.NewGauge(prometheus.GaugeOpts{Name: ApprovalPending, Help: "Pending human approvals"}),
		approved: map[string]time.Time{},
		waiting:  map[string]*waitingRun{},
	}
	info := prometheus.NewGauge(prometheus.GaugeOpts{Name: BuildInfo, Help: "Vigil's build (always 1)",
		ConstLabels: prometheus.Labels{"version": b.Version, "commit": b.Commit, "goversion": b.GoVersion}})
	info.Set(1)
	m.reg.MustRegister(m.requests, m.decisions, m.duration, m.pending, info,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is the registry the handler serves (tests gather from it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// SetTimer makes durations precise: each execution is timed from its
// record when the Timer can say, else from the log's times.
func (m *Metrics) SetTimer(t Timer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.timer = t
}

// SetPending sets the pending approvals gauge.
func (m *Metrics) SetPending(n int) { m.pending.Set(float64(n)) }

// Action is the action label of a capability: itself when Vigil executes
// it, OtherAction otherwise (and for none).
func Action(capability string) string {
	if media.Supports(capability) {
		return capability
	}
	if _, ok := scope.KindFor(capability); ok {
		return capability
	}
	return OtherAction
}

// Follow reads what was appended to the audit log at path since the last
// call and counts it. A log that is not the one read before (the follower's
// cut: replaced, shrunk, or its last read line changed) is counted again
// from its start: counters are reset first, so they always describe the log
// as it is.
func (m *Metrics) Follow(path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.follow == nil || m.follow.Path() != path {
		m.resetLocked()
		m.follow = audit.NewFollower(path, 0)
	}
	defer m.settleLocked()
	for {
		b, err := m.follow.Read()
		if err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
		if b.Cut {
			m.resetLocked()
		}
		for _, l := range b.Lines() {
			if l.Err == nil {
				m.count(l.Entry)
			}
		}
		if !b.More {
			return nil
		}
	}
}

// settleLocked times the executions waiting for their record.
func (m *Metrics) settleLocked() {
	for id, w := range m.waiting {
		from, to, ok := m.timer(id)
		switch {
		case ok && !to.Before(from):
			m.duration.WithLabelValues(w.action).Observe(to.Sub(from).Seconds())
		case w.tries < maxTries:
			w.tries++
			continue
		default:
			m.duration.WithLabelValues(w.action).Observe(w.logTo.Sub(w.logFrom).Seconds())
		}
		delete(m.waiting, id)
	}
}

// resetLocked forgets what was counted (the follower starts over by itself).
func (m *Metrics) resetLocked() {
	m.requests.Reset()
	m.decisions.Reset()
	m.duration.Reset()
	m.approved = map[string]time.Time{}
	m.waiting = map[string]*waitingRun{}
}

func (m *Metrics) count(e audit.Entry) {
	action := Action(e.Capability)
	if (e.Event == audit.EventApproved || e.Event == audit.EventDenied) && e.TaskID != "" {
		by := DecidedByPerson
		if strings.HasPrefix(e.Actor, "rule:") {
			by = DecidedByRule
		}
		m.decisions.WithLabelValues(by, e.Event).Inc()
	}
	switch e.Event {
	case audit.EventApproved:
		if e.TaskID == "" {
			return
		}
		if len(m.approved) >= maxOpen {
			m.approved = map[string]time.Time{}
		}
		if t, err := time.Parse(time.RFC3339, e.Time); err == nil {
			m.approved[e.TaskID] = t
		}
	case audit.EventExecuted, audit.EventFailed:
		status := StatusExecuted
		if e.Event == audit.EventFailed {
			status = StatusFailed
		}
		m.requests.WithLabelValues(action, status).Inc()
		if at, ok := m.approved[e.TaskID]; ok {
			delete(m.approved, e.TaskID)
			t, err := time.Parse(time.RFC3339, e.Time)
			switch {
			case err != nil || t.Before(at):
			case m.timer != nil && len(m.waiting) < maxOpen:
				m.waiting[e.TaskID] = &waitingRun{action: action, logFrom: at, logTo: t}
			default:
				m.duration.WithLabelValues(action).Observe(t.Sub(at).Seconds())
			}
		}
	case audit.EventSearched:
		status := StatusExecuted
		if !e.Success {
			status = StatusFailed
		}
		m.requests.WithLabelValues(action, status).Inc()
	case audit.EventDenied, audit.EventExpired, audit.EventRejected, StatusTampered:
		delete(m.approved, e.TaskID)
		m.requests.WithLabelValues(action, e.Event).Inc()
	}
}

// Handler serves /metrics from the registry and /healthz: 200 "ok" while
// health returns nil, 503 with the reason otherwise.
func (m *Metrics) Handler(health func() error) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err := health(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "unhealthy: %v\n", err)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}
