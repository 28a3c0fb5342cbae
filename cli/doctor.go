package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/safetext"
)

// doctorCheck is one line of `vigil doctor`'s report.
type doctorCheck struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// doctorQueueWait bounds the look at the shared queue's server.
var doctorQueueWait = 10 * time.Second

func newDoctorCmd(app *App) *cobra.Command {
	var asJSON bool
	var role string
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the deployment: who can write the home and decide, keys and tokens, backends, the queue's server",
		Long: "vigil doctor checks what this home relies on and says what is wrong: files of the home, or folders " +
			"above it, others may write; whether decisions need an operator's key; whether the SSH host key, the " +
			"operators' keys and the agents' tokens are usable; what an agent running as this account could do " +
			"today; search backends missing; and with [queue] url the server's version (2.10 or newer), JetStream and " +
			"Vigil's streams. It changes nothing. Exit 1 when a check fails.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch role {
			case "", natsqueue.RoleExecutor, natsqueue.RoleOperator, natsqueue.RoleAgent:
			default:
				return Failf(ExitBadInput, "--as: must be executor, operator or agent, got %q", role)
			}
			checks := []doctorCheck{doctorHome(app), doctorDecisions(app), doctorOperators(app), doctorHostKey(app),
				doctorAgents(app), doctorAccount(app), doctorBackends(app)}
			if app.Cfg.Queue.Enabled() {
				checks = append(checks, doctorQueue(cmd.Context(), app, role)...)
			}
			failed := 0
			for _, c := range checks {
				if !c.OK {
					failed++
				}
			}
			if asJSON {
				if err := app.PrintJSON(map[string]any{"checks": checks}); err != nil {
					return err
				}
			} else {
				for _, c := range checks {
					mark := "ok  "
					if !c.OK {
						mark = "FAIL"
					}
					fmt.Fprintf(app.Out, "%s %-8s %s\n", mark, c.Name, safetext.Line(c.Detail))
				}
			}
			if failed > 0 {
				return Quiet(ExitCheck)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"checks":[{"name","ok","detail"}]}`)
	cmd.Flags().StringVar(&role, "as", "", "the shared queue's role this home has, for its permissions: "+
		"executor, operator or agent (default: executor when the home lists [[devices]], else operator)")
	return cmd
}

// doctorBackends fails when no search backend is usable.
func doctorBackends(app *App) doctorCheck {
	c := doctorCheck{Name: "search"}
	var found []string
	for _, b := range detectBackends(app) {
		if b.OK {
			found = append(found, b.Name+" "+b.Version)
		}
	}
	if len(found) == 0 {
		c.Detail = "no search backend found (install ugrep or ripgrep: apt-get install ugrep ripgrep)"
		return c
	}
	c.OK, c.Detail = true, strings.Join(found, ", ")
	return c
}

// doctorQueue connects to the shared queue's server and reports its
// version (refused below 2.10, or without JetStream) and whether Vigil's
// streams are there.
func doctorQueue(ctx context.Context, app *App, role string) []doctorCheck {
	server := doctorCheck{Name: "queue"}
	if role == "" {
		role = natsqueue.RoleOperator
		if len(app.Cfg.Devices) > 0 {
			role = natsqueue.RoleExecutor
		}
	}
	q, err := queueConfig(app)
	if err != nil {
		server.Detail = err.Error()
		return []doctorCheck{server}
	}
	host, _ := os.Hostname()
	nc, err := natsqueue.Connect(natsqueue.ConnectOptions{Queue: q, Getenv: app.Getenv, Name: "vigil doctor@" + host,
		Role: role})
	if err != nil {
		server.Detail = err.Error()
		return []doctorCheck{server}
	}
	defer nc.Close()
	info, err := natsqueue.Server(nc)
	if err != nil {
		server.Detail = err.Error()
		return []doctorCheck{server}
	}
	server.OK = true
	server.Detail = fmt.Sprintf("nats-server %s at %s, JetStream on", info.Version, info.URL)
	if info.Cluster != "" {
		server.Detail += ", cluster " + info.Cluster
	}
	streams := doctorCheck{Name: "streams"}
	js, err := jetstream.New(nc)
	if err == nil {
		cctx, cancel := context.WithTimeout(ctx, doctorQueueWait)
		defer cancel()
		err = natsqueue.CheckStreams(cctx, js)
	}
	if err != nil {
		streams.Detail = fmt.Sprintf("%v (checked as the %s role; --as names another)", err, role)
	} else {
		streams.OK, streams.Detail = true, fmt.Sprintf("%s, %s and bucket %s are there", natsqueue.SubmitStream,
			natsqueue.AuditStream, natsqueue.TasksBucket)
	}
	return []doctorCheck{server, streams}
}
