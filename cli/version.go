package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// stamp is the source a binary was built from.
type stamp struct {
	Commit   string // full revision; "" when unknown
	Time     string // the commit's time (RFC 3339), when known
	Modified bool   // built from a tree with uncommitted changes
}

// String is the commit as `version` prints it: "abc123…", "abc123… (dirty)" or "unknown".
func (s stamp) String() string {
	switch {
	case s.Commit == "":
		return "unknown"
	case s.Modified:
		return s.Commit + " (dirty)"
	}
	return s.Commit
}

// readStamp reads the commit from the build info's vcs settings, which the
// go command writes when it builds in a git checkout; the -ldflags values
// (Commit, Modified) fill in when it did not.
func readStamp() stamp {
	info, _ := debug.ReadBuildInfo()
	return stampFrom(info, Commit, Modified)
}

func stampFrom(info *debug.BuildInfo, ldCommit, ldModified string) stamp {
	var s stamp
	if info != nil {
		for _, kv := range info.Settings {
			switch kv.Key {
			case "vcs.revision":
				s.Commit = kv.Value
			case "vcs.time":
				s.Time = kv.Value
			case "vcs.modified":
				s.Modified = kv.Value == "true"
			}
		}
	}
	if s.Commit == "" && ldCommit != "" {
		s.Commit, s.Modified = ldCommit, ldModified == "true"
	}
	return s
}

func newVersionCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print version, commit, Go version and the search backends found",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			backends := detectBackends(app)
			st := readStamp()
			if asJSON {
				out := map[string]any{
					"version": Version, "commit": st.Commit, "dirty": st.Modified, "go": runtime.Version(), "backends": backends,
				}
				if st.Commit == "" {
					out["commit"] = "unknown"
				}
				if st.Time != "" {
					out["commit_time"] = st.Time
				}
				return app.PrintJSON(out)
			}
			fmt.Fprintf(app.Out, "vigil %s (commit %s, %s)\n", Version, st, runtime.Version())
			if len(backends) == 0 {
				fmt.Fprintln(app.Out, "search backends: none found (install ugrep or ripgrep: apt-get install ugrep ripgrep)")
			}
			for _, b := range backends {
				fmt.Fprintf(app.Out, "search backend: %s %s (%s)\n", b.Name, b.Version, b.Path)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
