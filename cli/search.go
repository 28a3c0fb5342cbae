package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/vigil-dev/vigil/exec/search"
	"github.com/vigil-dev/vigil/safetext"
)

// searchFlags holds the search command's flags: the request fields, or
// --request naming a file with the request JSON itself.
type searchFlags struct {
	reqFile                                  string
	backend                                  string
	stream                                   bool
	json                                     bool
	caseMode                                 string
	fixed, word, recursive, hidden, follow   bool
	noIgnore                                 bool
	include, exclude                         []string
	ctxLines, maxResults, maxPerFile         int64
	maxFiles, maxSize, timeoutMS, fuzzyLevel int64
}

// newSearchCmd is seed 001's Search tool as a command: flags mirror the
// request fields, or --request reads the request JSON itself.
func newSearchCmd(app *App) *cobra.Command {
	sf := &searchFlags{}
	cmd := &cobra.Command{
		Use:   "search [flags] PATTERN [PATH]",
		Short: "Search files with ugrep or ripgrep: grep-like lines on a terminal, the response object as JSON otherwise",
		Long: "Search files with ugrep or ripgrep inside the sandbox root.\n\n" +
			"On a terminal it prints grep-like lines (path:line:text, context as path-line-text) and a\n" +
			"summary. Piped, redirected or with --json it prints the Search tool's response object (matches,\n" +
			"counts, truncation) as JSON, the same bytes agents and scripts have always read.",
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := app.Load(); err != nil {
				return err
			}
			req, err := sf.request(app, cmd, args)
			if err != nil {
				return sf.toolError(app, err)
			}
			return runSearch(cmd.Context(), app, req, sf)
		},
	}
	sf.bind(cmd)
	return cmd
}

func (sf *searchFlags) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&sf.reqFile, "request", "", "read the request JSON (the Search tool's arguments) from FILE, or - for stdin")
	f.StringVar(&sf.backend, "backend", "auto", "search backend: auto, ugrep or rg")
	f.BoolVar(&sf.stream, "stream", false, "print each event as a JSON line as soon as it is final, then the response")
	f.BoolVar(&sf.json, "json", false, "print the response object as JSON (the default when stdout is not a terminal)")
	f.StringVar(&sf.caseMode, "case", "smart", "case: smart, sensitive or insensitive (ASCII folding)")
	f.BoolVarP(&sf.fixed, "fixed-strings", "F", false, "treat the pattern as a literal string")
	f.BoolVarP(&sf.word, "word-regexp", "w", false, "match whole words only")
	f.StringArrayVar(&sf.include, "include", nil, "only search files matching this glob (repeatable)")
	f.StringArrayVar(&sf.exclude, "exclude", nil, "skip files and directories matching this glob (repeatable)")
	f.BoolVar(&sf.recursive, "recursive", true, "descend into subdirectories (--recursive=false: depth 1)")
	f.BoolVar(&sf.hidden, "hidden", false, "search hidden files and directories")
	f.BoolVar(&sf.follow, "follow", false, "follow symbolic links")
	f.BoolVar(&sf.noIgnore, "no-ignore", false, "do not honour .gitignore and .ignore files")
	f.Int64VarP(&sf.ctxLines, "context", "C", 0, "lines of context around each match")
	f.Int64Var(&sf.maxResults, "max-results", 0, "maximum events (matches plus context); default from config")
	f.Int64Var(&sf.maxPerFile, "max-matches-per-file", 0, "stop a file after this many matching lines")
	f.Int64Var(&sf.maxFiles, "max-files", 0, "stop after scanning this many files")
	f.Int64Var(&sf.maxSize, "max-file-size-bytes", 0, "skip larger files; default from config")
	f.Int64Var(&sf.timeoutMS, "timeout-ms", 0, "time limit in milliseconds; default from config")
	f.Int64Var(&sf.fuzzyLevel, "fuzzy", 0, "fuzzy level 1-4 (ugrep only)")
}

// request builds the search request from --request or from the arguments
// and the flags given. Its errors are for printToolError.
func (sf *searchFlags) request(app *App, cmd *cobra.Command, args []string) (search.Request, error) {
	if sf.reqFile != "" {
		if len(args) > 0 {
			return search.Request{}, &search.ToolError{Kind: search.BadArgs,
				Message: "--request: PATTERN and PATH arguments cannot be combined with --request"}
		}
		return readSearchRequest(app, sf.reqFile)
	}
	if len(args) == 0 {
		return search.Request{}, &search.ToolError{Kind: search.BadArgs, Message: "pattern: required (give PATTERN or --request)"}
	}
	var req search.Request
	req.Pattern = args[0]
	if len(args) > 1 {
		req.Path = search.Ptr(args[1])
	}
	sf.setFields(cmd, &req)
	return req, nil
}

// readSearchRequest reads the request JSON from name, or stdin for "-".
func readSearchRequest(app *App, name string) (search.Request, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(app.In)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return search.Request{}, &search.ToolError{Kind: search.BadArgs, Message: "--request: " + err.Error()}
	}
	return search.DecodeRequest(data)
}

// setFields copies the flags given on the command line into req; a flag
// left unset leaves its field nil, so the config's default applies.
func (sf *searchFlags) setFields(cmd *cobra.Command, req *search.Request) {
	f := cmd.Flags()
	if f.Changed("case") {
		req.Case = &sf.caseMode
	}
	setB := func(name string, v bool, dst **bool) {
		if f.Changed(name) {
			*dst = search.Ptr(v)
		}
	}
	setI := func(name string, v int64, dst **int64) {
		if f.Changed(name) {
			*dst = search.Ptr(v)
		}
	}
	setB("fixed-strings", sf.fixed, &req.FixedStrings)
	setB("word-regexp", sf.word, &req.WordRegexp)
	setB("recursive", sf.recursive, &req.Recursive)
	setB("hidden", sf.hidden, &req.Hidden)
	setB("follow", sf.follow, &req.Follow)
	setB("no-ignore", sf.noIgnore, &req.NoIgnore)
	if f.Changed("include") {
		req.IncludeGlob = sf.include
	}
	if f.Changed("exclude") {
		req.ExcludeGlob = sf.exclude
	}
	setI("context", sf.ctxLines, &req.Context)
	setI("max-results", sf.maxResults, &req.MaxResults)
	setI("max-matches-per-file", sf.maxPerFile, &req.MaxMatchesPerFile)
	setI("max-files", sf.maxFiles, &req.MaxFiles)
	setI("max-file-size-bytes", sf.maxSize, &req.MaxFileSizeBytes)
	setI("timeout-ms", sf.timeoutMS, &req.TimeoutMS)
	setI("fuzzy", sf.fuzzyLevel, &req.Fuzzy)
}

// runSearch runs req and prints the response JSON (after each event as a
// JSON line, with --stream). An interrupt ends the search early: the
// partial response is printed and the exit code is ExitExecution.
func runSearch(parent context.Context, app *App, req search.Request, sf *searchFlags) error {
	// A search allocates in one burst and exits: fewer collections
	// pay off (about 10% on a million-event response).
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	opts := searchOptions(app)
	opts.Backend = sf.backend
	ctx, stop := signal.NotifyContext(parent, os.Interrupt)
	defer stop()
	if searchForPerson(app, sf) {
		return runSearchForPerson(ctx, app, req, opts, sf)
	}
	var emit func(search.Batch)
	var buf []byte
	if sf.stream {
		emit = func(b search.Batch) {
			if len(b.Events) == 0 {
				return // progress only (files scanned): no event line
			}
			buf = buf[:0]
			for i := range b.Events {
				buf = b.Events[i].AppendJSON(buf)
				buf = append(buf, '\n')
			}
			_, _ = app.Out.Write(buf)
		}
	}
	resp, err := search.Run(ctx, req, opts, emit)
	if err != nil && !errors.Is(err, context.Canceled) {
		return sf.toolError(app, err)
	}
	// streamed: a million-match response is never held twice
	growPipe(app.Out)
	if werr := resp.WriteJSON(app.Out); werr != nil {
		return Fail(ExitExecution, werr)
	}
	if _, werr := io.WriteString(app.Out, "\n"); werr != nil {
		return Fail(ExitExecution, werr)
	}
	if err != nil {
		return Quiet(ExitExecution)
	}
	return nil
}

// toolError reports a tool error: as a sentence on stderr for a person at
// a terminal, as printToolError's JSON otherwise; the exit code is the same.
func (sf *searchFlags) toolError(app *App, err error) error {
	if !searchForPerson(app, sf) {
		return printToolError(app, err)
	}
	te := asToolError(err)
	fmt.Fprintln(app.Err, "vigil search: "+safetext.Line(te.Message))
	if te.Kind == search.BadArgs {
		return Quiet(ExitBadInput)
	}
	return Quiet(ExitExecution)
}

func asToolError(err error) *search.ToolError {
	var te *search.ToolError
	if !errors.As(err, &te) {
		te = &search.ToolError{Kind: search.ExecutionFailed, Message: err.Error()}
	}
	return te
}

// printToolError prints {"error":{"kind","message"}} and exits 2 (BadArgs)
// or 3 (ExecutionFailed).
func printToolError(app *App, err error) error {
	te := asToolError(err)
	enc := json.NewEncoder(app.Out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		Error *search.ToolError `json:"error"`
	}{te})
	if te.Kind == search.BadArgs {
		return Quiet(ExitBadInput)
	}
	return Quiet(ExitExecution)
}

// growPipe asks for a 1 MiB buffer when out is a pipe (best effort): with
// the default 64 KiB, writing a large response is a long series of waits
// for the reader.
func growPipe(out io.Writer) {
	f, ok := out.(*os.File)
	if !ok {
		return
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	if sc, err := f.SyscallConn(); err == nil {
		_ = sc.Control(func(fd uintptr) { _, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, 1<<20) })
	}
}
