package serve

import (
	"context"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/notify"
)

// An arrival carries the SSH command that opens the task on the gate the
// serve code names, and none when no address is known.
func TestArrivalCarriesTheSSHCommand(t *testing.T) {
	e := newRealEnv(t, time.Minute)
	e.submit("ssh-1")
	for addr, want := range map[string]string{
		"vigil@gate.example:2222": "ssh -p 2222 vigil@gate.example preview ssh-1",
		"":                        "",
		"0.0.0.0:2222":            "", // a listen address no phone can dial
	} {
		s, err := New(Options{Queue: e.q, TasksDir: e.TasksDir(), Audit: e.Audit, SSHAddress: addr,
			Notify: func(context.Context, notify.Event) {}})
		if err != nil {
			t.Fatal(err)
		}
		s.Pass(context.Background())
		if len(s.events) != 1 {
			t.Fatalf("%q: %d events, want the arrival", addr, len(s.events))
		}
		if ev := <-s.events; ev.Kind != notify.Arrived || ev.SSH != want {
			t.Errorf("%q: event %q with SSH %q, want %q", addr, ev.Kind, ev.SSH, want)
		}
	}
}
