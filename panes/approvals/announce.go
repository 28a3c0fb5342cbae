package approvalspane

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/notify"
)

// alerts remembers what the person was told: the tasks seen (an arrival is
// announced once, and none of those waiting at start) and those announced
// as a minute from their deadline.
type alerts struct {
	known  map[string]bool // nil before the first list
	warned map[string]bool
}

// arrivals are the tasks in list not seen before; the first list is
// taken as known.
func (a *alerts) arrivals(list []approval.Record) []approval.Record {
	var arrived []approval.Record
	if a.known == nil {
		a.known = map[string]bool{}
		for _, r := range list {
			a.known[r.TaskID] = true
		}
		return nil
	}
	for _, r := range list {
		if !a.known[r.TaskID] {
			arrived = append(arrived, r)
			a.known[r.TaskID] = true
		}
	}
	return arrived
}

// announce tells the person through the terminal that tasks arrived and
// that tasks are a minute from their deadline (each once): the bell and an
// OSC 9 desktop notification with [notify] terminal, else the bell alone
// with [approvals] bell. The text is masked and display-safe (notify.Event).
func (p *Pane) announce(arrived []approval.Record) tea.Cmd {
	now := p.o.Now()
	var out strings.Builder
	if p.o.Notify {
		for _, r := range arrived {
			out.WriteString(notify.Terminal(terminalEvent(notify.Arrived, r, now)))
		}
		for _, r := range p.queue.list {
			if p.alerts.expiring(r, now) {
				out.WriteString(notify.Terminal(terminalEvent(notify.Expiring, r, now)))
			}
		}
	} else if len(arrived) > 0 && p.o.Bell {
		out.WriteString(notify.Bell)
	}
	if out.Len() == 0 {
		return nil
	}
	return tea.Raw(out.String())
}

// expiring reports, once for each task, that r is a minute from its deadline.
func (a *alerts) expiring(r approval.Record, now time.Time) bool {
	left := deadlineAt(r).Sub(now)
	if r.State != approval.Pending || a.warned[r.TaskID] || left <= 0 || left > notify.ExpiringBefore {
		return false
	}
	if a.warned == nil {
		a.warned = map[string]bool{}
	}
	a.warned[r.TaskID] = true
	return true
}

func terminalEvent(kind string, r approval.Record, now time.Time) notify.Event {
	at, _ := r.Deadline()
	return notify.Event{Kind: kind, TaskID: r.TaskID, Agent: r.Agent, Action: r.CapabilityID, Device: r.Device, ExpiresIn: at.Sub(now)}
}
