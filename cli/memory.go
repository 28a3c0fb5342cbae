package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/memory"
	"github.com/vigil-dev/vigil/preview"
	"github.com/vigil-dev/vigil/safetext"
)

// newMemoryCmd is `vigil memory add|import|search|list|reindex` of CLI.md.
func newMemoryCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "Store memories and search them (the search_memory tool)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newMemoryAddCmd(app), newMemoryImportCmd(app), newMemorySearchCmd(app), newMemoryListCmd(app),
		newMemoryReindexCmd(app))
	return cmd
}

// openMemory opens the home's memory.db, creating folders as needed, with
// the [memory.embedder] when one is configured; embedder failures go to
// app.Log.
func openMemory(app *App) (*memory.Store, error) { return openMemoryWith(app, app.Log) }

// memoryCLILog is the log of `vigil memory …`: warnings (a failing embedder)
// on stderr, masked like every log Vigil writes.
func memoryCLILog(app *App) *slog.Logger {
	return slog.New(preview.NewMaskingHandler(slog.NewTextHandler(app.Err, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// openMemoryWith is openMemory with embedder failures logged to log.
func openMemoryWith(app *App, log *slog.Logger) (*memory.Store, error) {
	if err := app.EnsureState(); err != nil {
		return nil, err
	}
	opt := memory.Options{Now: app.Now, Log: log}
	if e := app.Cfg.Memory.Embedder; e != nil {
		emb, err := memoryEmbedder(app, e)
		if err != nil {
			return nil, err
		}
		opt.Embedder, opt.EmbedRequired, opt.EmbedDimensions = emb, e.Required, e.Dimensions
	}
	return memory.Open(app.Paths.Memory, opt)
}

// memoryEmbedder builds the HTTP embedder of [memory.embedder]. The API key
// comes from the environment variable it names, never from the file.
func memoryEmbedder(app *App, e *config.EmbedderConfig) (*memory.HTTPEmbedder, error) {
	emb := &memory.HTTPEmbedder{Kind: e.Kind, URL: e.URL, ModelName: e.Model, Dimensions: e.Dimensions,
		Batch: e.EffectiveBatch(), Timeout: e.EffectiveTimeout(), AllowPlainHTTP: e.AllowPlainHTTP}
	if e.APIKeyEnv != "" {
		emb.APIKey = strings.TrimSpace(app.Getenv(e.APIKeyEnv))
		if emb.APIKey == "" {
			return nil, Failf(ExitBadInput, "[memory.embedder] api_key_env: the environment variable %s is not set", e.APIKeyEnv)
		}
	}
	return emb, nil
}

// memoryFail maps store errors to CLI.md's exit codes: invalid input is 2,
// everything the store could not do is 3.
func memoryFail(err error) error {
	var inv *memory.InvalidError
	var ie *memory.ImportError
	if errors.As(err, &inv) || (errors.As(err, &ie) && !isCore(ie.Err)) {
		return Fail(ExitBadInput, err)
	}
	return Fail(ExitExecution, err)
}

func isCore(err error) bool {
	var ce *memory.CoreError
	return errors.As(err, &ce)
}

func newMemoryAddCmd(app *App) *cobra.Command {
	var text, source, date string
	var tags []string
	cmd := &cobra.Command{
		Use:   "add --text T [--tag X]... [--source S] [--date YYYY-MM-DD]",
		Short: "Store one memory and print it as JSON",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m := memory.NewMemory{Text: text, Tags: tags, Source: source}
			if date != "" {
				t, err := memory.ParseTime(date)
				if err != nil {
					return Failf(ExitBadInput, "--date: %v", err)
				}
				m.CreatedAt = t
			}
			s, err := openMemoryWith(app, memoryCLILog(app))
			if err != nil {
				return memoryFail(err)
			}
			defer s.Close()
			id, err := s.Add(cmd.Context(), m)
			if err != nil {
				return memoryFail(err)
			}
			got, err := s.Get(cmd.Context(), id)
			if err != nil {
				return memoryFail(err)
			}
			return app.PrintJSON(got)
		},
	}
	f := cmd.Flags()
	f.StringVar(&text, "text", "", "the memory's text (required)")
	f.StringArrayVar(&tags, "tag", nil, "a tag (repeatable)")
	f.StringVar(&source, "source", "", "where the memory came from")
	f.StringVar(&date, "date", "", "creation date, YYYY-MM-DD or RFC 3339 (default: now)")
	_ = cmd.MarkFlagRequired("text")
	return cmd
}

func newMemoryImportCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE.jsonl|-",
		Short: "Store every memory of a JSON Lines file, or none of them",
		Long: "Each line is {\"text\":…, \"tags\":[…], \"source\":…, \"created_at\":\"RFC 3339 or YYYY-MM-DD\"}.\n" +
			"The file is streamed and stored in one transaction: a bad line is reported with its\n" +
			"number and nothing of the file is kept.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var r io.Reader = app.In
			name := args[0]
			if name != "-" {
				f, err := os.Open(name)
				if err != nil {
					return Fail(ExitBadInput, err)
				}
				defer f.Close()
				r = f
			}
			s, err := openMemoryWith(app, memoryCLILog(app))
			if err != nil {
				return memoryFail(err)
			}
			defer s.Close()
			start := time.Now()
			n, err := s.Import(cmd.Context(), r)
			if err != nil {
				return memoryFail(fmt.Errorf("%s: %w", name, err))
			}
			total, err := s.Count(cmd.Context())
			if err != nil {
				return memoryFail(err)
			}
			out := map[string]any{"file": name, "imported": n, "total": total}
			if app.Cfg.Memory.Embedder != nil {
				// The rows are stored whatever happens here: a failure is
				// reported and `vigil memory reindex` carries on later.
				st, err := s.Reindex(cmd.Context(), newMemoryProgress(app, "embed").update)
				out["embedded"] = st.Embedded
				if err != nil {
					out["embed_error"] = err.Error()
					fmt.Fprintf(app.Err, "vigil: memories stored, but embedding failed: %s; run `vigil memory reindex` later\n", err)
				}
			}
			out["seconds"] = time.Since(start).Round(time.Millisecond).Seconds()
			return app.PrintJSON(out)
		},
	}
}

func newMemorySearchCmd(app *App) *cobra.Command {
	var (
		query, source, from, to string
		limit                   int
		tags                    []string
		textOnly                bool
	)
	cmd := &cobra.Command{
		Use:   "search 'ARGS_JSON' | search -q TEXT [--limit N] [--tag X]... [--source S] [--from DATE] [--to DATE]",
		Short: "Run the search_memory tool and print its MCP response object",
		Long: "ARGS_JSON is the arguments object exactly as an MCP client sends it, e.g.\n" +
			"  vigil memory search '{\"query\":\"python\",\"limit\":5,\"filters\":{\"tags\":[\"tutorial\"]}}'\n" +
			"The flag form builds the same object. The response is printed as JSON, the same whatever\n" +
			"the exit code: 0 when the tool answered (hits or none), 2 when it refused the arguments,\n" +
			"3 when the search failed (isError is true for both). For filters without a query, and\n" +
			"fields for scripts, see `vigil memory list`.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			flagForm := cmd.Flags().Changed("query")
			for _, f := range []string{"limit", "tag", "source", "from", "to"} {
				if cmd.Flags().Changed(f) && !flagForm {
					return Failf(ExitBadInput, "--%s needs -q/--query (filters alone: vigil memory list --%s …)", f, f)
				}
			}
			var raw []byte
			switch {
			case flagForm && len(args) == 1:
				return Failf(ExitBadInput, "give either ARGS_JSON or -q/--query, not both")
			case flagForm:
				raw = flagArgs(cmd, query, limit, tags, source, from, to)
			case len(args) == 1:
				raw = []byte(args[0])
			default:
				return Failf(ExitBadInput, "missing ARGS_JSON or -q/--query")
			}
			var core memory.Searcher
			s, err := openMemoryWith(app, memoryCLILog(app))
			if err != nil {
				var ee *ExitError
				if errors.As(err, &ee) {
					return err
				}
				// A damaged or locked database is the tool's Processing error, not a crash.
				core = memory.Unavailable(err)
			} else {
				defer s.Close()
				core = s
			}
			out := memory.NewTool(core, app.Log).Run(cmd.Context(), raw)
			if textOnly {
				err = writeMemoryText(app.Out, out)
			} else {
				err = app.PrintJSON(out.Result)
			}
			if err != nil {
				return err
			}
			return memorySearchExit(out)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&query, "query", "q", "", "search text (flag form)")
	f.IntVar(&limit, "limit", memory.DefaultLimit, "maximum results, 1-100")
	f.StringArrayVar(&tags, "tag", nil, "only memories with this tag (repeatable, all must match)")
	f.StringVar(&source, "source", "", "only memories from this source (exact)")
	f.StringVar(&from, "from", "", "only memories created on or after YYYY-MM-DD")
	f.StringVar(&to, "to", "", "only memories created on or before YYYY-MM-DD")
	f.BoolVar(&textOnly, "text", false, "print the response text for a person instead of the JSON object")
	return cmd
}

// memorySearchExit is the exit code of a search whose response is printed:
// the response already says why, so nothing more goes to stderr.
func memorySearchExit(out memory.Outcome) error {
	switch {
	case len(out.Invalid) > 0:
		return Quiet(ExitBadInput)
	case out.Err != nil || out.Result.IsError:
		return Quiet(ExitExecution)
	}
	return nil
}

// flagArgs builds the arguments object from the flag form; unset flags are
// left out so the tool applies its own defaults and checks.
func flagArgs(cmd *cobra.Command, query string, limit int, tags []string, source, from, to string) []byte {
	args := map[string]any{"query": query}
	if cmd.Flags().Changed("limit") {
		args["limit"] = limit
	}
	filters := map[string]any{}
	if len(tags) > 0 {
		filters["tags"] = tags
	}
	if cmd.Flags().Changed("source") {
		filters["source"] = source
	}
	if cmd.Flags().Changed("from") {
		filters["date_from"] = strings.TrimSpace(from)
	}
	if cmd.Flags().Changed("to") {
		filters["date_to"] = strings.TrimSpace(to)
	}
	if len(filters) > 0 {
		args["filters"] = filters
	}
	b, _ := json.Marshal(args) // maps of strings, ints and string slices always marshal
	return b
}

// writeMemoryText is `memory search --text`: the response text in the seed's
// layout, for a person. Memories are untrusted, so Vigil lays the hits out
// itself — each preview on one line with its own line ends, controls and
// invisible characters shown as marked escapes (safetext) — instead of
// printing the formatted text, whose line ends could come from a memory.
func writeMemoryText(w io.Writer, out memory.Outcome) error {
	var b strings.Builder
	if len(out.Hits) == 0 {
		for _, l := range safetext.Lines(strings.TrimSuffix(out.Result.Text(), "\n")) {
			b.WriteString(l + "\n")
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "Found %d results:\n", len(out.Hits))
	for i, h := range out.Hits {
		fmt.Fprintf(&b, "\n%d. [Score: %.2f]", i+1, h.Score)
		if h.Match != "" {
			b.WriteString(" [Match: " + h.Match + "]")
		}
		if len(h.Tags) > 0 {
			tags := make([]string, len(h.Tags))
			for j, t := range h.Tags {
				tags[j] = safetext.Line(t)
			}
			b.WriteString(" [Tags: " + strings.Join(tags, ", ") + "]")
		}
		b.WriteString("\n" + safetext.Line(memory.Preview(h.Text)) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func newMemoryReindexCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "reindex",
		Short: "Embed every memory that has no vector from the configured [memory.embedder] model",
		Long: "Embeds, a batch at a time, the memories with no vector, another model's vector or another\n" +
			"dimension's (after [memory.embedder] model or dimensions changed). Each batch is stored as\n" +
			"it completes, so an interrupted reindex keeps its work. Progress goes to stderr: a bar on a\n" +
			"terminal, plain lines otherwise; the summary is printed as JSON.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e := app.Cfg.Memory.Embedder
			if e == nil {
				return Failf(ExitBadInput, "no [memory.embedder] is configured in %s", app.Paths.Config)
			}
			s, err := openMemoryWith(app, memoryCLILog(app))
			if err != nil {
				return memoryFail(err)
			}
			defer s.Close()
			start := time.Now()
			st, err := s.Reindex(cmd.Context(), newMemoryProgress(app, "reindex").update)
			if err != nil {
				return memoryFail(err)
			}
			return app.PrintJSON(map[string]any{"model": e.Model, "embedded": st.Embedded, "total": st.Total,
				"seconds": time.Since(start).Round(time.Millisecond).Seconds()})
		},
	}
}

// memoryProgress shows how far a long memory operation is on stderr: on a
// terminal a bar redrawn in place (count, rate, time left), otherwise a plain
// line at most every memoryProgressEvery and at the end.
type memoryProgress struct {
	w     io.Writer
	tty   bool
	label string
	now   func() time.Time
	start time.Time
	last  time.Time
}

const memoryProgressEvery = 2 * time.Second

func newMemoryProgress(app *App, label string) *memoryProgress {
	tty := false
	if f, ok := app.Err.(*os.File); ok {
		tty = term.IsTerminal(f.Fd())
	}
	return &memoryProgress{w: app.Err, tty: tty, label: label, now: app.Now}
}

func (p *memoryProgress) update(done, total int) {
	now := p.now()
	if p.start.IsZero() {
		p.start = now
	}
	final := done >= total
	gap := memoryProgressEvery
	if p.tty {
		gap = 100 * time.Millisecond
	}
	if !final && done != 0 && now.Sub(p.last) < gap {
		return
	}
	if done == 0 && total == 0 {
		return
	}
	p.last = now
	line := memoryProgressLine(p.label, done, total, now.Sub(p.start), p.tty)
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K"+line)
		if final {
			fmt.Fprintln(p.w)
		}
		return
	}
	fmt.Fprintln(p.w, line)
}

// memoryProgressLine is "embed [#####.....] 1200/3000 40%  400/s  5s left" (the
// bar only on a terminal).
func memoryProgressLine(label string, done, total int, elapsed time.Duration, bar bool) string {
	var b strings.Builder
	b.WriteString(label)
	pct := 100
	if total > 0 {
		pct = done * 100 / total
	}
	if bar {
		const width = 24
		fill := width * pct / 100
		b.WriteString(" [" + strings.Repeat("█", fill) + strings.Repeat("░", width-fill) + "]")
	}
	fmt.Fprintf(&b, " %d/%d %d%%", done, total, pct)
	if secs := elapsed.Seconds(); secs > 0 && done > 0 {
		rate := float64(done) / secs
		fmt.Fprintf(&b, "  %.0f/s", rate)
		if done < total {
			left := time.Duration(float64(total-done) / rate * float64(time.Second))
			fmt.Fprintf(&b, "  %s left", left.Round(time.Second))
		}
	}
	return b.String()
}
