package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/exec/memory"
	"github.com/vigil-dev/vigil/safetext"
)

// Limits of `vigil memory list --limit`: a script may ask for more than the
// search_memory tool's 100 at once, up to what the search ranks quickly.
const (
	memoryListDefault = 50
	memoryListMax     = 1000
)

// memoryListItem is one memory as `vigil memory list` prints it for
// scripts. Score and match are present only when a query ranked the hits.
type memoryListItem struct {
	ID        int64     `json:"id"`
	Text      string    `json:"text"`
	Tags      []string  `json:"tags"`
	Source    string    `json:"source"`
	CreatedAt time.Time `json:"created_at"`
	Score     *float64  `json:"score,omitempty"`
	Match     string    `json:"match,omitempty"`
}

// memoryListFlags are the flags of `vigil memory list`.
type memoryListFlags struct {
	query, source, from, to string
	tags                    []string
	limit                   int
	asJSON                  bool
}

func newMemoryListCmd(app *App) *cobra.Command {
	var fl memoryListFlags
	cmd := &cobra.Command{
		Use:   "list [-q Q] [--tag T]... [--source S] [--from D] [--to D] [--limit N]",
		Short: "List memories for people and scripts, with or without a query",
		Long: "Without --query the memories passing the filters are listed newest first; with one they are\n" +
			"ranked best first and each has a score (0 to 1) and a match (keyword, meaning or both).\n" +
			"--tag (repeatable) keeps memories carrying every tag given; --source is exact. --from and\n" +
			"--to take YYYY-MM-DD (a whole UTC day, both inclusive) or an RFC 3339 time (that instant,\n" +
			"inclusive). On a terminal the memories are a table; piped, or with --json, a JSON array of\n" +
			"{\"id\",\"text\",\"tags\",\"source\",\"created_at\"} (plus \"score\" and \"match\" with a query).\n" +
			"Exit 2 when an argument is refused, 3 when the memories cannot be read.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			req, err := fl.request(cmd)
			if err != nil {
				return err
			}
			s, err := openMemoryWith(app, memoryCLILog(app))
			if err != nil {
				return memoryFail(err)
			}
			defer s.Close()
			hits, err := s.Find(cmd.Context(), req)
			if err != nil {
				return memoryFail(err)
			}
			items := memoryListItems(hits, req.Query != "")
			if fl.asJSON || !memoryOutIsTerminal(app) {
				return app.PrintJSON(items)
			}
			return writeMemoryTable(app.Out, items, req.Query != "", memoryOutWidth(app))
		},
	}
	f := cmd.Flags()
	f.StringVarP(&fl.query, "query", "q", "", "rank by this text (keyword, and meaning when [memory.embedder] is set)")
	f.StringArrayVar(&fl.tags, "tag", nil, "only memories with this tag (repeatable, all must match)")
	f.StringVar(&fl.source, "source", "", "only memories from this source (exact)")
	f.StringVar(&fl.from, "from", "", "only memories created on or after this day (YYYY-MM-DD) or time (RFC 3339)")
	f.StringVar(&fl.to, "to", "", "only memories created on or before this day (YYYY-MM-DD) or time (RFC 3339)")
	f.IntVar(&fl.limit, "limit", memoryListDefault, fmt.Sprintf("at most this many memories, 1-%d", memoryListMax))
	f.BoolVar(&fl.asJSON, "json", false, "print JSON (the default when stdout is not a terminal)")
	return cmd
}

// request validates the flags into a listing request: the query, tags and
// source by the search_memory tool's own rules (its field names in the
// messages), the dates and the limit here. Any refusal is exit 2.
func (fl *memoryListFlags) request(cmd *cobra.Command) (memory.Request, error) {
	args := map[string]any{}
	if cmd.Flags().Changed("query") {
		args["query"] = fl.query
	}
	filters := map[string]any{}
	if len(fl.tags) > 0 {
		filters["tags"] = fl.tags
	}
	if cmd.Flags().Changed("source") {
		filters["source"] = fl.source
	}
	if len(filters) > 0 {
		args["filters"] = filters
	}
	raw, _ := json.Marshal(args) // strings and string slices always marshal
	req, invalid := memory.ParseListArguments(raw)
	if len(invalid) > 0 {
		return req, Fail(ExitBadInput, &memory.InvalidError{Fields: invalid})
	}
	if fl.limit < 1 || fl.limit > memoryListMax {
		return req, Failf(ExitBadInput, "--limit: must be between 1 and %d, got %d", memoryListMax, fl.limit)
	}
	req.Limit = fl.limit
	if err := fl.dates(&req.Filters); err != nil {
		return req, err
	}
	return req, nil
}

// dates reads --from and --to: a day is the whole UTC day, an RFC 3339
// time is that instant; both bounds are inclusive.
func (fl *memoryListFlags) dates(f *memory.Filters) error {
	var from, to time.Time
	if s := strings.TrimSpace(fl.from); s != "" {
		t, err := memory.ParseTime(s)
		if err != nil {
			return Failf(ExitBadInput, "--from: %v", err)
		}
		from, f.DateFrom = t, t
	}
	if s := strings.TrimSpace(fl.to); s != "" {
		t, err := memory.ParseTime(s)
		if err != nil {
			return Failf(ExitBadInput, "--to: %v", err)
		}
		to = t
		if isDay(s) {
			f.DateTo, to = t, t.AddDate(0, 0, 1).Add(-time.Millisecond)
		} else {
			f.Until = t
		}
	}
	if !from.IsZero() && !to.IsZero() && from.After(to) {
		return Failf(ExitBadInput, "--from must not be after --to (%s > %s)", strings.TrimSpace(fl.from), strings.TrimSpace(fl.to))
	}
	return nil
}

// isDay reports a YYYY-MM-DD date (ParseTime accepted it already).
func isDay(s string) bool { return len(s) == len("2006-01-02") && !strings.Contains(s, "T") }

func memoryListItems(hits []memory.Hit, ranked bool) []memoryListItem {
	items := make([]memoryListItem, len(hits))
	for i, h := range hits {
		it := memoryListItem{ID: h.ID, Text: h.Text, Tags: h.Tags, Source: h.Source, CreatedAt: h.CreatedAt.UTC()}
		if it.Tags == nil {
			it.Tags = []string{}
		}
		if ranked {
			score := h.Score
			it.Score, it.Match = &score, h.Match
			if it.Match == "" {
				it.Match = memory.MatchKeyword // no embedder: keyword search only
			}
		}
		items[i] = it
	}
	return items
}

// memoryOutIsTerminal reports whether stdout is a terminal (a person reads).
func memoryOutIsTerminal(app *App) bool {
	f, ok := app.Out.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// memoryOutWidth is the terminal's width in columns (80 when unknown).
func memoryOutWidth(app *App) int {
	if f, ok := app.Out.(*os.File); ok {
		if w, _, err := term.GetSize(f.Fd()); err == nil && w > 0 {
			return w
		}
	}
	return 80
}

// Columns of the human table; TEXT takes what the terminal has left.
const (
	memColCreated = len("2006-01-02 15:04")
	memColSource  = 10
	memColTags    = 16
	memColScore   = len("SCORE")
	memColMatch   = len("keyword")
	memColTextMin = 20
)

// writeMemoryTable is the human form of `vigil memory list`: one row a
// memory, every value from the store cut to its column through safetext
// (memories are untrusted text: a control, a line end or a bidi character
// shows as a marked escape and cannot paint a column of its own), then a
// line saying how many and in which order.
func writeMemoryTable(w io.Writer, items []memoryListItem, ranked bool, width int) error {
	var b strings.Builder
	if len(items) == 0 {
		b.WriteString("no memories match\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	idW := len("ID")
	for _, it := range items {
		idW = max(idW, len(strconv.FormatInt(it.ID, 10)))
	}
	used := idW + memColCreated + memColSource + memColTags + 4*len(tableSep)
	head := []string{fmt.Sprintf("%-*s", idW, "ID"), fmt.Sprintf("%-*s", memColCreated, "CREATED")}
	if ranked {
		used += memColScore + memColMatch + 2*len(tableSep)
		head = append(head, "SCORE", fmt.Sprintf("%-*s", memColMatch, "MATCH"))
	}
	head = append(head, fmt.Sprintf("%-*s", memColSource, "SOURCE"), fmt.Sprintf("%-*s", memColTags, "TAGS"), "TEXT")
	textW := max(width-used, memColTextMin)
	b.WriteString(strings.Join(head, tableSep) + "\n")
	for _, it := range items {
		cells := []string{fmt.Sprintf("%-*d", idW, it.ID), it.CreatedAt.UTC().Format("2006-01-02 15:04")}
		if ranked {
			cells = append(cells, fmt.Sprintf("%*.2f", memColScore, *it.Score), fmt.Sprintf("%-*s", memColMatch, it.Match))
		}
		cells = append(cells, auditCell(it.Source, memColSource), auditCell(strings.Join(it.Tags, ","), memColTags),
			strings.TrimRight(safetext.Cell(oneLineText(it.Text), textW), " "))
		b.WriteString(strings.Join(cells, tableSep) + "\n")
	}
	order := "newest first"
	if ranked {
		order = "best first"
	}
	fmt.Fprintf(&b, "%s, %s\n", memoryPlural(len(items), "memory", "memories"), order)
	_, err := io.WriteString(w, b.String())
	return err
}

// oneLineText joins a memory's lines with spaces for its table row: a
// person reads prose, and a line end in the text cannot start a row.
// Everything else (a lone CR, a tab, a bidi control) is left for the cell's
// safetext to show as a marked escape.
func oneLineText(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ").Replace(s)
}

// memoryPlural is "1 memory", "2 memories".
func memoryPlural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
