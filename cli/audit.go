package cli

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/preview"
	"github.com/vigil-dev/vigil/safetext"
)

func newAuditCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Read and check the tamper-evident audit log",
		Long: "The audit log is a hash chain in JSON Lines (audit.log under the home). " +
			"`show` and `tail` read it; `verify` recomputes the chain (and checks it extends checkpoints kept elsewhere); " +
			"`checkpoint` prints a signed checkpoint of it; `seal` is the one way past a cut or altered end.",
	}
	cmd.AddCommand(newAuditShowCmd(app), newAuditTailCmd(app), newAuditVerifyCmd(app),
		newAuditCheckpointCmd(app), newAuditSealCmd(app))
	return cmd
}

func newAuditShowCmd(app *App) *cobra.Command {
	var (
		asJSON bool
		limit  int
		q      audit.Query // the selection shared with `audit tail` and the Audit pane
	)
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print audit entries (oldest first)",
		Long: "Prints the entries that match the filters, oldest first; --limit N keeps the last N.\n" +
			"Human output is a table (seq, time, actor, event, task, target, outcome); text from the log is\n" +
			"shown with control and invisible characters as marked escapes, each value cut to its column\n" +
			"(an ellipsis marks the cut; --json has the whole values). With --json each entry is printed\n" +
			"as one JSON line as stored in the log (hash and prev included), byte for byte except that DEL, C1,\n" +
			"bidi and format characters are written as JSON \\u escapes (the same strings: parse and re-encode\n" +
			"to get the stored bytes and their hash).\n" +
			"Lines that are not valid entries are named on stderr; run `vigil audit verify` for the chain.\n" +
			"--task and --event read only the lines that hold the value (as grep would find them), so a\n" +
			"damaged line elsewhere is left to `vigil audit verify`.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 {
				return Failf(ExitBadInput, "--limit: must be 0 (all) or more, got %d", limit)
			}
			lines, err := selectEntries(app.Paths.Audit, q, limit)
			if err != nil {
				return Fail(ExitExecution, fmt.Errorf("audit log %s: %w", app.Paths.Audit, err))
			}
			if asJSON {
				return printEntriesJSON(app, lines)
			}
			return printEntriesTable(app, lines)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&asJSON, "json", false, "print JSON Lines, one entry per line as stored")
	fl.StringVar(&q.TaskID, "task", "", "only entries of task `ID`")
	fl.StringVar(&q.Event, "event", "", "only entries of event `E` (submitted, approved, executed, …)")
	fl.IntVar(&limit, "limit", 0, "print only the last `N` matching entries (0: all)")
	return cmd
}

// selectEntries returns the matching lines (bad lines always, so they are
// reported), keeping the last limit entries. Without filters it reads only
// the tail of the file.
func selectEntries(path string, q audit.Query, limit int) ([]audit.Line, error) {
	if q.Empty() && limit > 0 {
		lines, _, err := audit.ReadTail(path, limit)
		return lines, err
	}
	var out []audit.Line
	// the fields as written rule most lines out before any is decoded
	_, err := audit.ScanQuery(context.Background(), path, 0, q, func(l audit.Line) bool {
		out = append(out, l)
		if limit > 0 && len(out) > 2*limit {
			// keep memory bounded on a huge log: drop what can no longer be shown
			out = append(out[:0], out[len(out)-limit:]...)
		}
		return true
	})
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, err
}

func printEntriesJSON(app *App, lines []audit.Line) error {
	for _, l := range lines {
		if err := writeEntryJSON(app, l); err != nil {
			return err
		}
	}
	return nil
}

func writeEntryJSON(app *App, l audit.Line) error {
	if l.Err != nil {
		fmt.Fprintf(app.Err, "vigil: audit line at byte %d is not a valid entry (%v); run `vigil audit verify`\n", l.Offset, l.Err)
		return nil
	}
	b, err := l.Entry.Line()
	if err != nil {
		return Fail(ExitExecution, err)
	}
	// the stored line, except that what a terminal would act on or hide (DEL,
	// C1, bidi and format characters) is written as a JSON \u escape: the
	// same strings; parse and re-encode to get the stored bytes back
	if _, err := app.Out.Write(terminalSafeJSON(append(b, '\n'))); err != nil {
		return Fail(ExitExecution, err)
	}
	return nil
}

// auditTable lays out the human output of `audit show` and `audit tail`:
// fixed columns, each value from the log cut to its width (safetext.Cell),
// so a value never carries text into the next column: an actor holding
// spaces cannot paint columns of its own, a tab or newline shows as an
// escape, and a wide or invisible character cannot shift what follows
// (widths count display cells, which tabwriter's runes did not).
type auditTable struct {
	seq int // the SEQ column's width: a number Vigil wrote, never cut
}

// auditColumns are the widths of the columns after SEQ; OUTCOME, the last,
// is cut to its width but not padded.
var auditColumns = []struct {
	name  string
	width int
}{{"TIME", 20}, {"ACTOR", 24}, {"EVENT", 14}, {"TASK", 24}, {"TARGET", 24}, {"OUTCOME", 24}}

// tableSep separates the columns (as tabwriter's padding did).
const tableSep = "  "

// newAuditTable sizes SEQ for the largest seq it will show (at least
// minSeq digits, so rows printed later by tail stay aligned).
func newAuditTable(lines []audit.Line, minSeq int) auditTable {
	t := auditTable{seq: max(minSeq, len("SEQ"))}
	for _, l := range lines {
		t.seq = max(t.seq, len(fmt.Sprint(l.Entry.Seq)))
	}
	return t
}

func (t auditTable) header() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s", t.seq, "SEQ")
	for i, c := range auditColumns {
		b.WriteString(tableSep)
		if i == len(auditColumns)-1 {
			b.WriteString(c.name)
		} else {
			fmt.Fprintf(&b, "%-*s", c.width, c.name)
		}
	}
	return b.String()
}

func (t auditTable) row(e audit.Entry) string {
	// ids an agent chose are masked when secret-shaped (a pasted API key
	// used as a task id or a lease sub), before they are cut
	id := preview.MaskIdentifier(e.TaskID)
	taskCell := auditCell(id, auditColumns[3].width)
	if id == e.TaskID && id != "" && task.ValidateTaskID(id) == nil {
		// a valid task id stays whole (the handle other commands take) and
		// holds no space to forge a column with; a rejected submission's
		// id may be anything, and is cut like any other value
		taskCell = fmt.Sprintf("%-*s", auditColumns[3].width, id)
	}
	cells := []string{fmt.Sprintf("%-*d", t.seq, e.Seq), auditCell(e.Time, auditColumns[0].width),
		auditCell(preview.MaskIdentifier(e.Actor), auditColumns[1].width), auditCell(e.Event, auditColumns[2].width), taskCell,
		auditCell(e.Target, auditColumns[4].width), lastCell(e.Outcome(), auditColumns[5].width)}
	return strings.Join(cells, tableSep)
}

// auditCell is a value shown display-safe in its column ("-" when empty).
func auditCell(s string, width int) string {
	if s == "" {
		s = "-"
	}
	return safetext.Cell(s, width)
}

// lastCell is auditCell for the last column: cut, not padded.
func lastCell(s string, width int) string {
	if s == "" {
		s = "-"
	}
	return cutLine(s, width)
}

// cutLine is s shown display-safe on one line, cut with an ellipsis to at
// most width cells.
func cutLine(s string, width int) string { return safetext.Inspect(s).Truncate(width).String() }

func printEntriesTable(app *App, lines []audit.Line) error {
	t := newAuditTable(lines, 0)
	w := bufio.NewWriter(app.Out)
	w.WriteString(t.header() + "\n")
	for _, l := range lines {
		if l.Err != nil {
			fmt.Fprintf(app.Err, "vigil: audit line at byte %d is not a valid entry (%v); run `vigil audit verify`\n", l.Offset, l.Err)
			continue
		}
		w.WriteString(t.row(l.Entry) + "\n")
	}
	if err := w.Flush(); err != nil {
		return Fail(ExitExecution, err)
	}
	return nil
}

func newAuditTailCmd(app *App) *cobra.Command {
	var (
		asJSON bool
		n      int
		q      audit.Query
	)
	cmd := &cobra.Command{
		Use:   "tail",
		Short: "Print the last entries, then follow new ones as they are appended",
		Long: "Prints the last -n entries, then waits for appends (by any process) and prints each new\n" +
			"entry as it arrives, until interrupted. Human output is one row per entry in the columns of\n" +
			"`audit show` (seq, time, actor, event, task, target, outcome; each value cut to its column);\n" +
			"--json prints each entry as one JSON line, whole.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n < 0 {
				return Failf(ExitBadInput, "--lines: must be 0 or more, got %d", n)
			}
			if err := os.MkdirAll(filepath.Dir(app.Paths.Audit), 0o700); err != nil {
				return Fail(ExitExecution, err)
			}
			// no header, and rows printed as they come: SEQ is sized for
			// a long log up front so the columns stay put
			tailTable := auditTable{seq: 7}
			emit := func(l audit.Line) error {
				if l.Err == nil && !q.Match(l.Entry) {
					return nil
				}
				if asJSON {
					return writeEntryJSON(app, l)
				}
				if l.Err != nil {
					fmt.Fprintf(app.Err, "vigil: audit line at byte %d is not a valid entry (%v)\n", l.Offset, l.Err)
					return nil
				}
				_, err := fmt.Fprintln(app.Out, tailTable.row(l.Entry))
				return err
			}
			return followAudit(cmd.Context(), app.Paths.Audit, n, q, emit)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&asJSON, "json", false, "print each entry as one JSON line")
	fl.IntVarP(&n, "lines", "n", 10, "print the last `N` matching entries before following")
	fl.StringVar(&q.TaskID, "task", "", "only entries of task `ID`")
	fl.StringVar(&q.Event, "event", "", "only entries of event `E`")
	return cmd
}

// followAudit prints the last n matching entries, then every complete line
// appended after them. An audit.Follower reads what is new from where the
// backlog ended each time audit.Watch wakes it (the log may not exist yet,
// and the head beside it is replaced by rename), so a half-written line
// waits for its end.
func followAudit(ctx context.Context, path string, n int, q audit.Query, emit func(audit.Line) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	// watch before the first read so no append slips between them
	w, err := audit.Watch(path)
	if err != nil {
		return Fail(ExitExecution, err)
	}
	defer w.Close()
	// lines before off are the backlog; anything after arrives as an event
	off, err := audit.EndOfCompleteLines(path)
	if err != nil {
		return Fail(ExitExecution, err)
	}
	if n > 0 {
		first, err := selectEntries(path, q, n)
		if err != nil {
			return Fail(ExitExecution, err)
		}
		// an append since off is printed by its own event
		for len(first) > 0 && first[len(first)-1].Offset >= off {
			first = first[:len(first)-1]
		}
		for _, l := range first {
			if err := emit(l); err != nil {
				return Fail(ExitExecution, err)
			}
		}
	}
	f := audit.NewFollower(path, off)
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-w.C():
			if !ok {
				return nil
			}
			w.Take() // the follower reads from its offset: a lost event loses nothing
			if err := catchUp(f, emit); err != nil {
				return err
			}
		}
	}
}

// catchUp prints the lines f finds appended. Its cut is this command's as
// before the follower: a log shorter than what was printed is an error; a
// log missing, replaced or changed at its last line is read on from where
// the printing stopped (when that is still the start of a line).
func catchUp(f *audit.Follower, emit func(audit.Line) error) error {
	rewound := false
	for {
		off := f.Offset()
		b, err := f.Read()
		if err != nil {
			return Fail(ExitExecution, err)
		}
		if b.Cut {
			st, serr := os.Stat(f.Path())
			switch {
			case serr == nil && st.Size() < off:
				return Failf(ExitCheck, "audit log %s shrank from %d to %d bytes while following; run `vigil audit verify`", f.Path(), off, st.Size())
			case serr != nil:
				f.Rewind(off) // gone: wait for it to come back
				return nil
			case rewound:
				return Failf(ExitCheck, "audit log %s was replaced while following (byte %d is not the start of a line); run `vigil audit verify`", f.Path(), off)
			}
			f.Rewind(off)
			rewound = true
			continue
		}
		for _, l := range b.Lines() {
			if err := emit(l); err != nil {
				return Fail(ExitExecution, err)
			}
		}
		if !b.More {
			return nil
		}
	}
}

func newAuditVerifyCmd(app *App) *cobra.Command {
	var (
		asJSON      bool
		checkpoints []string
		keyFile     string
		local       bool
		logFile     string
	)
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Recompute the hash chain; exit 1 naming the first bad entry",
		Long: "Recomputes every entry's hash and link. Prints \"chain verified · N entries\", or\n" +
			"\"BROKEN at #I: REASON (DETAIL)\" and exits 1, where I is the 0-based line of the first bad\n" +
			"entry and REASON one of edited, deleted, duplicated, reordered, truncated, garbage, replaced,\n" +
			"bad-signature. Breaks recorded by `vigil audit seal` verify, and are listed on lines of their own\n" +
			"(\"sealed gap at #I: …\").\n" +
			"--log FILE verifies another copy of a log instead of the home's: one `vigil queue audit-pull` wrote,\n" +
			"or the copy of the executor's log the TUI keeps on a shared queue (queue-audit/audit.log).\n" +
			"--checkpoint FILE (repeatable) also checks that the log extends each signed checkpoint in FILE\n" +
			"(one printed by `vigil audit checkpoint`, or a copy of audit.checkpoints): a log cut below it\n" +
			"(truncated), replaced by another chain (replaced) or rewritten before it (edited), or a checkpoint\n" +
			"not signed by the operator key (bad-signature), exits 1. Checkpoints and seals are checked with\n" +
			"keys/operator.pub.pem, or --key FILE: a copy of the public key kept elsewhere.\n" +
			"The checkpoints Vigil wrote beside the log (audit.checkpoints) are checked too, by default: the log\n" +
			"must still hold every prefix they recorded, except where `vigil audit seal` recorded a break after\n" +
			"them (given with --checkpoint, the same file is held strictly). So is the prefix the Audit screen\n" +
			"verified before (audit.log.verified): a log with fewer entries, another first entry or another entry\n" +
			"at that prefix's end was cut or rewritten since, until a seal records it.\n" +
			"--local-checkpoints=false skips both.\n" +
			"--json prints {\"ok\",\"entries\"} or {\"ok\":false,\"entries\",\"index\",\"reason\",\"detail\"}, plus\n" +
			"\"checkpoint\" (the file that failed; index is -1 when its own signature failed), \"checkpoints\"\n" +
			"(how many were checked) and \"sealed\"\n" +
			"([{index, expected_entries, found_entries, reason, signature}]) when they apply.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var o audit.VerifyOptions
			logPath := app.Paths.Audit
			if logFile != "" {
				// a copy named on purpose must exist (the home's own log may
				// not yet: it then verifies as empty)
				if _, err := os.Stat(logFile); err != nil {
					return Fail(ExitBadInput, fmt.Errorf("--log: %w", err))
				}
				logPath = logFile
			}
			pub, err := operatorPublicKey(app, keyFile)
			if err != nil {
				return err
			}
			o.Key = pub
			for _, name := range checkpoints {
				if pub == nil {
					return Failf(ExitBadInput, "--checkpoint: checking a checkpoint needs the operator's public key: "+
						"--key FILE, or %s", filepath.Join(app.Paths.Keys, "operator.pub.pem"))
				}
				data, err := os.ReadFile(name)
				if err != nil {
					return Fail(ExitBadInput, fmt.Errorf("--checkpoint: %w", err))
				}
				cps, err := audit.ParseCheckpoints(name, data, pub)
				var ce *audit.CheckpointError
				if errors.As(err, &ce) {
					return printVerify(app, asJSON, audit.Report{Index: -1, Reason: ce.Reason, Detail: ce.Error(), Checkpoint: ce.Source})
				}
				if err != nil {
					return Fail(ExitBadInput, fmt.Errorf("--checkpoint: %w", err))
				}
				o.Checkpoints = append(o.Checkpoints, cps...)
			}
			if local {
				if err := addLocalCheckpoints(app, logPath, asJSON, &o, checkpoints); err != nil {
					return err
				}
				// the prefix a viewer verified before: a log that no longer
				// holds it was cut or rewritten since (with its head)
				o.Recorded = audit.LoadVerified(logPath)
			}
			var done func()
			o.Progress, done = terminalProgress(app, "verifying")
			rep, err := audit.VerifyWith(logPath, o)
			done()
			if err != nil {
				return Fail(ExitExecution, fmt.Errorf("audit log %s: %w", logPath, err))
			}
			return printVerify(app, asJSON, rep)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&asJSON, "json", false, "print the report as JSON")
	fl.StringArrayVar(&checkpoints, "checkpoint", nil, "also check that the log extends the signed checkpoint(s) in `FILE` (repeatable)")
	fl.StringVar(&keyFile, "key", "", "the operator's public key `FILE` (PEM) to check checkpoints and seals with (default keys/operator.pub.pem)")
	fl.BoolVar(&local, "local-checkpoints", true, "also check the checkpoints Vigil wrote beside the log (audit.checkpoints), when there are any")
	fl.StringVar(&logFile, "log", "", "verify the audit log `FILE` (a copy) instead of the home's")
	return cmd
}

// addLocalCheckpoints adds the audit.checkpoints beside logPath to o, unless it is one of the
// files --checkpoint names (then it is held strictly, as those are). A log
// must extend them too, except where a seal recorded the break (see
// audit.VerifyOptions.Local). They are checked with the home's operator
// public key, which signed them.
func addLocalCheckpoints(app *App, logPath string, asJSON bool, o *audit.VerifyOptions, named []string) error {
	path := audit.CheckpointsPath(logPath)
	if _, err := os.Stat(path); err != nil {
		return nil // none written yet
	}
	abs, _ := filepath.Abs(path)
	for _, n := range named {
		if a, err := filepath.Abs(n); err == nil && a == abs {
			return nil
		}
	}
	// Vigil signed them with the home's operator key; --key is for files kept elsewhere
	pub, err := operatorPublicKey(app, "")
	if err != nil {
		return err
	}
	if pub == nil {
		fmt.Fprintf(app.Err, "vigil: %s not checked: no operator public key %s\n",
			path, filepath.Join(app.Paths.Keys, "operator.pub.pem"))
		return nil
	}
	cps, torn, err := audit.LocalCheckpoints(logPath, pub)
	var ce *audit.CheckpointError
	switch {
	case errors.As(err, &ce):
		return printVerify(app, asJSON, audit.Report{Index: -1, Reason: ce.Reason, Detail: ce.Error(), Checkpoint: ce.Source})
	case err != nil:
		return Fail(ExitCheck, fmt.Errorf("%s: %w (--local-checkpoints=false verifies without it)", path, err))
	case torn:
		fmt.Fprintf(app.Err, "vigil: the last note of %s was cut short (a crash while it was written); it is not checked\n", path)
	}
	o.Local = cps
	return nil
}

// terminalProgress shows how far a long pass over the log is, on stderr
// when it is a terminal (nothing otherwise: output piped or captured stays
// clean). It starts only once the pass has taken progressDelay, so a small
// log prints its verdict alone, redraws at most five times a second, and
// is erased by done (with spaces, not an escape sequence, under NO_COLOR).
func terminalProgress(app *App, what string) (progress func(done, total int64), done func()) {
	f, ok := app.Err.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return nil, func() {}
	}
	start := time.Now()
	var last time.Time
	width := 0
	progress = func(n, total int64) {
		now := time.Now()
		if now.Sub(start) < progressDelay || now.Sub(last) < 200*time.Millisecond || total <= 0 {
			return
		}
		last = now
		line := fmt.Sprintf("%s… %d%% (%d of %d MB)", what, n*100/total, n>>20, total>>20)
		width = max(width, len(line))
		fmt.Fprintf(f, "\r%s", line)
	}
	return progress, func() {
		switch {
		case width == 0:
		case app.Getenv("NO_COLOR") != "":
			fmt.Fprintf(f, "\r%s\r", strings.Repeat(" ", width))
		default:
			fmt.Fprint(f, "\r\x1b[K")
		}
	}
}

// progressDelay: a pass shorter than this shows no progress at all.
const progressDelay = 100 * time.Millisecond

// operatorPublicKey is --key, or the home's operator public key when there
// is one (nil without either).
func operatorPublicKey(app *App, keyFile string) (ed25519.PublicKey, error) {
	explicit := keyFile != ""
	if !explicit {
		keyFile = filepath.Join(app.Paths.Keys, "operator.pub.pem")
	}
	pub, err := audit.LoadPublicKey(keyFile)
	switch {
	case err == nil:
		return pub, nil
	case !explicit && errors.Is(err, os.ErrNotExist):
		return nil, nil
	default:
		return nil, Fail(ExitBadInput, fmt.Errorf("--key: %w", err))
	}
}

// printVerify prints a report (text goes through safetext: seal reasons and
// file names come from outside) and exits 1 when it is not OK.
func printVerify(app *App, asJSON bool, rep audit.Report) error {
	if asJSON {
		if err := app.PrintJSON(rep); err != nil {
			return err
		}
	} else {
		var b strings.Builder
		if !rep.OK && rep.Index < 0 {
			fmt.Fprintf(&b, "BROKEN: %s (%s)\n", rep.Reason, safetext.Line(rep.Detail))
		} else {
			for _, l := range strings.Split(rep.String(), "\n") {
				b.WriteString(safetext.Line(l) + "\n")
			}
		}
		if _, err := io.WriteString(app.Out, b.String()); err != nil {
			return Fail(ExitExecution, err)
		}
	}
	if !rep.OK {
		return Quiet(ExitCheck)
	}
	return nil
}

func newAuditCheckpointCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "checkpoint",
		Short: "Print a signed checkpoint of the log (C2SP signed note) to keep elsewhere",
		Long: "Verifies the whole chain, then prints a checkpoint of it signed with the operator key\n" +
			"(keys/operator.key.pem) as a C2SP signed note, the format of Go's checksum database:\n\n" +
			"  vigil-audit/<first 16 hex digits of entry #0's hash>   which log\n" +
			"  <size>                                                  how many entries\n" +
			"  <base64 of entry #size-1's hash>                        the chain's end\n" +
			"  (blank line)\n" +
			"  — vigil-audit/… <signature>\n\n" +
			"Keep it outside the home (another disk, a git repo, a message to yourself); later,\n" +
			"`vigil audit verify --checkpoint FILE` fails if the log no longer extends it. A broken chain\n" +
			"is not checkpointed (exit 1). --json prints {\"origin\",\"size\",\"hash\",\"note\"}.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			keyPath := filepath.Join(app.Paths.Keys, "operator.key.pem")
			key, err := audit.LoadKey(keyPath)
			if err != nil {
				return Failf(ExitExecution, "operator key: %v (run `vigil keys init` first)", err)
			}
			rep, err := audit.Verify(app.Paths.Audit)
			if err != nil {
				return Fail(ExitExecution, fmt.Errorf("audit log %s: %w", app.Paths.Audit, err))
			}
			if !rep.OK {
				return Failf(ExitCheck, "no checkpoint of a broken log: %s", safetext.Line(rep.String()))
			}
			if rep.Entries == 0 {
				return Failf(ExitCheck, "no checkpoint of an empty log: %s has no entries yet", app.Paths.Audit)
			}
			cp := audit.Checkpoint{Origin: audit.Origin(rep.First), Size: rep.Entries, Hash: rep.Last}
			msg, err := audit.SignCheckpoint(cp, key)
			if err != nil {
				return Fail(ExitExecution, err)
			}
			if asJSON {
				return app.PrintJSON(map[string]any{"origin": cp.Origin, "size": cp.Size, "hash": cp.Hash, "note": string(msg)})
			}
			if _, err := app.Out.Write(msg); err != nil {
				return Fail(ExitExecution, err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {origin, size, hash, note} as JSON")
	return cmd
}

func newAuditSealCmd(app *App) *cobra.Command {
	var (
		asJSON bool
		reason string
	)
	cmd := &cobra.Command{
		Use:   "seal --reason R",
		Short: "Record a cut or altered log in a signed entry so it can grow again",
		Long: "When the log's end is not the one audit.log.head recorded (entries cut, replaced or edited),\n" +
			"Vigil appends nothing and every decision fails (exit 3). Seal is the one way on: it keeps the\n" +
			"longest prefix whose chain verifies, moves any damaged lines after it to\n" +
			"audit.log.sealed-<time> (never deleted), and appends a \"sealed\" entry signed with the operator\n" +
			"key that records the end expected, the end found and the reason (masked). The gap is listed by\n" +
			"every `vigil audit verify` from then on. A seal can hide a deletion from the log itself, which\n" +
			"is why checkpoints kept elsewhere matter: a checkpoint taken before the cut still fails.\n" +
			"Exit 2 when the log is intact (nothing to seal). --json prints the sealed entry as stored.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(reason) == "" {
				return Failf(ExitBadInput, "--reason: say why the log is sealed (it is kept in the log for ever)")
			}
			if err := app.EnsureState(); err != nil {
				return err
			}
			key, err := audit.LoadKey(filepath.Join(app.Paths.Keys, "operator.key.pem"))
			if err != nil {
				return Failf(ExitExecution, "operator key: %v (run `vigil keys init` first)", err)
			}
			l, err := audit.Open(app.Paths.Audit, app.Now)
			if err != nil && !isDamaged(err) {
				return Fail(ExitExecution, err)
			}
			e, err := l.Seal(app.Operator(), preview.MaskString(reason), key)
			switch {
			case errors.Is(err, audit.ErrNothingToSeal):
				return Fail(ExitBadInput, err)
			case err != nil:
				return Fail(ExitExecution, err)
			}
			if asJSON {
				return writeEntryJSON(app, audit.Line{Entry: e})
			}
			var d audit.SealDetails
			_ = json.Unmarshal(e.Details, &d)
			exp := "no head"
			if d.Expected != nil {
				exp = "the head expected " + plural(int(d.Expected.Seq+1), "entry", "entries")
			}
			found := int64(0)
			if d.Found != nil {
				found = d.Found.Seq + 1
			}
			fmt.Fprintf(app.Out, "sealed at #%d: %s, %d kept\n", e.Seq, exp, found)
			if d.MovedTo != "" {
				fmt.Fprintf(app.Out, "damaged lines (%d bytes) moved to %s\n", d.Bytes, filepath.Join(filepath.Dir(app.Paths.Audit), d.MovedTo))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the sealed entry as one JSON line")
	cmd.Flags().StringVar(&reason, "reason", "", "why the log is sealed (`R`, recorded masked)")
	return cmd
}

// isDamaged: Open repairs a torn tail by appending, which a damaged log refuses.
func isDamaged(err error) bool {
	var de *audit.DamagedError
	return errors.As(err, &de)
}
