package approvalspane

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/notify"
)

// alerts remembers what the person was told: the tasks seen (an arrival is
// announced once, and none of those waiting at start), those announced as
// a minute from their deadline, and the burst not told yet.
type alerts struct {
	known  map[string]bool // nil before the first list
	warned map[string]bool
	burst  notify.Burst // events since the last notification, told together
	last   time.Time    // when the last notification went out
}

// burstWindow is the least time between two notifications: what comes
// within it (30 tasks submitted one after another) is told once when it
// has passed, as "29 new tasks", not as a bell and a notification each.
const burstWindow = 5 * time.Second

// arrivals are the tasks in list not seen before; the first list is
// taken as known.
func (a *alerts) arrivals(list []approval.Record, now time.Time) []approval.Record {
	var arrived []approval.Record
	if a.known == nil {
		a.known = map[string]bool{}
		for _, r := range list {
			a.known[r.TaskID] = true
		}
		return nil
	}
	for _, r := range list {
		// a task a rule is deciding is not news; if the rule's decision
		// fails it stays, and arrives once the grace is over
		if !a.known[r.TaskID] && !r.RuleDeciding(now) {
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
// A burst is told once: the first event goes out at once, what follows
// within burstWindow is gathered and told together on the first call (every
// tick calls) after the window, so a burst rings one bell per window.
func (p *Pane) announce(arrived []approval.Record) tea.Cmd {
	now := p.o.Now()
	a := &p.alerts
	if p.o.Notify {
		for _, r := range arrived {
			a.burst.Add(terminalEvent(notify.Arrived, r, now))
		}
		for _, r := range p.queue.list {
			if a.expiring(r, now) {
				a.burst.Add(terminalEvent(notify.Expiring, r, now))
			}
		}
	} else if p.o.Bell {
		for _, r := range arrived {
			a.burst.Add(terminalEvent(notify.Arrived, r, now))
		}
	}
	// a clock set back does not hold notifications for as long
	if a.burst.Len() == 0 || (now.Before(a.last.Add(burstWindow)) && !now.Before(a.last)) {
		return nil
	}
	out := notify.Bell
	if p.o.Notify {
		out = a.burst.Terminal()
	}
	a.burst, a.last = notify.Burst{}, now
	return tea.Raw(out)
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
