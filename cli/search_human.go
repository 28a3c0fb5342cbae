package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/term"

	"github.com/vigil-dev/vigil/exec/search"
	"github.com/vigil-dev/vigil/safetext"
)

// searchForPerson reports whether `vigil search` prints grep-like lines:
// stdout is a terminal and neither --json nor --stream asked for JSON.
// Piped, redirected or with --json the output is the response object,
// byte for byte what agents and scripts have always read (CLI.md).
func searchForPerson(app *App, sf *searchFlags) bool {
	if sf.json || sf.stream {
		return false
	}
	f, ok := app.Out.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// grepColors are grep's default colours (GREP_COLORS ms, fn, ln, se).
const (
	grepMatch = "\x1b[1;31m"
	grepPath  = "\x1b[35m"
	grepLine  = "\x1b[32m"
	grepSep   = "\x1b[36m"
	grepOff   = "\x1b[m"
)

// grepWriter prints events as grep does: "path:line:text" for a match,
// "path-line-text" for context, "--" between groups that do not touch.
// Every name and line goes through safetext: a file's bytes never reach the
// terminal as controls.
type grepWriter struct {
	w      io.Writer
	color  bool
	ctx    bool // context lines were asked for: groups are separated
	path   string
	line   uint64
	any    bool
	failed error
}

func (g *grepWriter) paint(code, s string) string {
	if !g.color || s == "" {
		return s
	}
	return code + s + grepOff
}

func (g *grepWriter) events(evs []search.Event) {
	var b strings.Builder
	for i := range evs {
		ev := &evs[i]
		if g.ctx && g.any && (ev.Path != g.path || ev.LineNumber != g.line+1) {
			b.WriteString(g.paint(grepSep, "--") + "\n")
		}
		g.path, g.line, g.any = ev.Path, ev.LineNumber, true
		sep := ":"
		if ev.Type != "match" {
			sep = "-"
		}
		b.WriteString(g.paint(grepPath, safetext.Line(ev.Path)) + g.paint(grepSep, sep) +
			g.paint(grepLine, strconv.FormatUint(ev.LineNumber, 10)) + g.paint(grepSep, sep))
		if ev.Cut() && ev.TextOffset > 0 {
			b.WriteString("…")
		}
		b.WriteString(g.text(ev))
		if ev.Cut() && ev.TextOffset+len(ev.Line) < ev.LineBytes {
			b.WriteString("…")
		}
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(g.w, b.String()); err != nil && g.failed == nil {
		g.failed = err
	}
}

// text is the event's line made safe, its matches painted. Each piece is
// escaped on its own, so a match's colour never lands inside an escape.
func (g *grepWriter) text(ev *search.Event) string {
	if !g.color || ev.Type != "match" || len(ev.Submatches) == 0 {
		return safetext.Line(ev.Line)
	}
	var b strings.Builder
	at := 0
	for _, s := range ev.Submatches {
		if s.Start < at || s.End > len(ev.Line) || s.Start >= s.End {
			continue
		}
		b.WriteString(safetext.Line(ev.Line[at:s.Start]))
		b.WriteString(g.paint(grepMatch, safetext.Line(ev.Line[s.Start:s.End])))
		at = s.End
	}
	b.WriteString(safetext.Line(ev.Line[at:]))
	return b.String()
}

// summary is the closing line: matches and files in words, then what
// limited the search.
func searchSummary(resp search.Response, matches, files int) string {
	s := fmt.Sprintf("%s in %s (%s scanned)", searchPlural(matches, "match", "matches"), searchPlural(files, "file", "files"),
		searchPlural(int(resp.FilesScanned), "file", "files"))
	if resp.Truncated {
		s += "; more not shown: raise --max-results"
	}
	if resp.TimedOut {
		s += "; timed out: raise --timeout-ms"
	}
	return s
}

// searchPlural is "1 match", "2 matches".
func searchPlural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// runSearchForPerson runs req printing grep-like lines as the batches come,
// then the summary; file errors go to stderr. Exit codes are the JSON
// path's: 0 whether or not anything matched, 3 when interrupted or failed.
func runSearchForPerson(ctx context.Context, app *App, req search.Request, opts search.Options, sf *searchFlags) error {
	g := &grepWriter{w: app.Out, color: app.Getenv("NO_COLOR") == "", ctx: req.Context != nil && *req.Context > 0}
	matches := 0
	files := map[string]bool{}
	resp, err := search.Run(ctx, req, opts, func(b search.Batch) {
		g.events(b.Events)
		for i := range b.Events {
			if b.Events[i].Type == "match" {
				matches++
				files[b.Events[i].Path] = true
			}
		}
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		return sf.toolError(app, err)
	}
	for _, fe := range resp.Errors {
		fmt.Fprintln(app.Err, "vigil search: "+safetext.Line(fe.Path)+": "+safetext.Line(fe.Error))
	}
	sum := searchSummary(resp, matches, len(files))
	if err != nil {
		sum += "; interrupted"
	}
	if _, werr := fmt.Fprintln(app.Out, sum); werr != nil || g.failed != nil {
		return Fail(ExitExecution, errors.Join(g.failed, werr))
	}
	if err != nil {
		return Quiet(ExitExecution)
	}
	return nil
}
