package cli

import (
	"context"
	"encoding/json"
	"errors"
	"golang.org/x/sys/unix"
	"io"
	"os"
	"os/signal"
	"runtime/debug"

	"github.com/spf13/cobra"
	"github.com/vigil-dev/vigil/exec/search"
)

// newSearchCmd is seed 001's Search tool as a command: flags mirror the
// request fields, or --request reads the request JSON itself.
func newSearchCmd(app *App) *cobra.Command {
	var (
		reqFile                                  string
		backend                                  string
		stream                                   bool
		caseMode                                 string
		fixed, word, recursive, hidden, follow   bool
		noIgnore                                 bool
		include, exclude                         []string
		ctxLines, maxResults, maxPerFile         int64
		maxFiles, maxSize, timeoutMS, fuzzyLevel int64
	)
	cmd := &cobra.Command{
		Use:   "search [flags] PATTERN [PATH]",
		Short: "Search files with ugrep or ripgrep; prints the SRD response object as JSON",
		Args:  cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := app.Load(); err != nil {
				return err
			}
			var req search.Request
			if reqFile != "" {
				if len(args) > 0 {
					return printToolError(app, &search.ToolError{Kind: search.BadArgs,
						Message: "--request: PATTERN and PATH arguments cannot be combined with --request"})
				}
				var data []byte
				var err error
				if reqFile == "-" {
					data, err = io.ReadAll(app.In)
				} else {
					data, err = os.ReadFile(reqFile)
				}
				if err != nil {
					return printToolError(app, &search.ToolError{Kind: search.BadArgs, Message: "--request: " + err.Error()})
				}
				if req, err = search.DecodeRequest(data); err != nil {
					return printToolError(app, err)
				}
			} else {
				if len(args) == 0 {
					return printToolError(app, &search.ToolError{Kind: search.BadArgs, Message: "pattern: required (give PATTERN or --request)"})
				}
				req.Pattern = args[0]
				if len(args) > 1 {
					req.Path = search.Ptr(args[1])
				}
				f := cmd.Flags()
				if f.Changed("case") {
					req.Case = &caseMode
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
				setB("fixed-strings", fixed, &req.FixedStrings)
				setB("word-regexp", word, &req.WordRegexp)
				setB("recursive", recursive, &req.Recursive)
				setB("hidden", hidden, &req.Hidden)
				setB("follow", follow, &req.Follow)
				setB("no-ignore", noIgnore, &req.NoIgnore)
				if f.Changed("include") {
					req.IncludeGlob = include
				}
				if f.Changed("exclude") {
					req.ExcludeGlob = exclude
				}
				setI("context", ctxLines, &req.Context)
				setI("max-results", maxResults, &req.MaxResults)
				setI("max-matches-per-file", maxPerFile, &req.MaxMatchesPerFile)
				setI("max-files", maxFiles, &req.MaxFiles)
				setI("max-file-size-bytes", maxSize, &req.MaxFileSizeBytes)
				setI("timeout-ms", timeoutMS, &req.TimeoutMS)
				setI("fuzzy", fuzzyLevel, &req.Fuzzy)
			}
			// A search allocates in one burst and exits: fewer collections
			// pay off (about 10% on a million-event response).
			defer debug.SetGCPercent(debug.SetGCPercent(400))
			opts := searchOptions(app)
			opts.Backend = backend
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			var emit func(search.Batch)
			var buf []byte
			if stream {
				emit = func(b search.Batch) {
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
				return printToolError(app, err)
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
		},
	}
	f := cmd.Flags()
	f.StringVar(&reqFile, "request", "", "read the request JSON (FR-LS-02) from FILE, or - for stdin")
	f.StringVar(&backend, "backend", "auto", "search backend: auto, ugrep or rg")
	f.BoolVar(&stream, "stream", false, "print each event as a JSON line as soon as it is final, then the response")
	f.StringVar(&caseMode, "case", "smart", "case: smart, sensitive or insensitive (ASCII folding)")
	f.BoolVarP(&fixed, "fixed-strings", "F", false, "treat the pattern as a literal string")
	f.BoolVarP(&word, "word-regexp", "w", false, "match whole words only")
	f.StringArrayVar(&include, "include", nil, "only search files matching this glob (repeatable)")
	f.StringArrayVar(&exclude, "exclude", nil, "skip files and directories matching this glob (repeatable)")
	f.BoolVar(&recursive, "recursive", true, "descend into subdirectories (--recursive=false: depth 1)")
	f.BoolVar(&hidden, "hidden", false, "search hidden files and directories")
	f.BoolVar(&follow, "follow", false, "follow symbolic links")
	f.BoolVar(&noIgnore, "no-ignore", false, "do not honour .gitignore and .ignore files")
	f.Int64VarP(&ctxLines, "context", "C", 0, "lines of context around each match")
	f.Int64Var(&maxResults, "max-results", 0, "maximum events (matches plus context); default from config")
	f.Int64Var(&maxPerFile, "max-matches-per-file", 0, "stop a file after this many matching lines")
	f.Int64Var(&maxFiles, "max-files", 0, "stop after scanning this many files")
	f.Int64Var(&maxSize, "max-file-size-bytes", 0, "skip larger files; default from config")
	f.Int64Var(&timeoutMS, "timeout-ms", 0, "time limit in milliseconds; default from config")
	f.Int64Var(&fuzzyLevel, "fuzzy", 0, "fuzzy level 1-4 (ugrep only)")
	return cmd
}

// printToolError prints {"error":{"kind","message"}} and exits 2 (BadArgs)
// or 3 (ExecutionFailed).
func printToolError(app *App, err error) error {
	var te *search.ToolError
	if !errors.As(err, &te) {
		te = &search.ToolError{Kind: search.ExecutionFailed, Message: err.Error()}
	}
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
