package memory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// The seed's fixed response texts.
const (
	NoResultsText  = "No results found matching your query."
	UnexpectedText = "Error: An unexpected error occurred. Please check logs for details."
	previewRunes   = 200
	logQueryRunes  = 50
)

// Result is the MCP tool response object, marshalled exactly as the seed gives it.
type Result struct {
	Content []TextContent `json:"content"`
	IsError bool          `json:"isError"`
}

// TextContent is one MCP content block; this tool always sends one of type "text".
type TextContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Text returns the response's single text block.
func (r Result) Text() string {
	if len(r.Content) == 0 {
		return ""
	}
	return r.Content[0].Text
}

func textResult(text string, isErr bool) Result {
	return Result{Content: []TextContent{{Type: "text", Text: text}}, IsError: isErr}
}

// Outcome is everything one call produced, for callers that want more than
// the text (the Memory pane): the response, the validated request, the typed
// hits, the validation failures, and the categorised error.
type Outcome struct {
	Result  Result
	Request Request      // valid only when Invalid is empty
	Hits    []Hit        // rank order; empty on error or no results
	Invalid []FieldError // validation failures in field order
	Err     error        // *SearchError, *CoreError or an unexpected error
}

// Tool is the search_memory tool: validate → delegate → format, never panicking
// and always answering.
type Tool struct {
	core Searcher
	log  *slog.Logger
}

// NewTool returns the tool over core. A nil logger discards logs.
func NewTool(core Searcher, log *slog.Logger) *Tool {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Tool{core: core, log: log}
}

// Execute runs the tool on a raw arguments object and returns the MCP response.
func (t *Tool) Execute(ctx context.Context, args []byte) Result {
	return t.Run(ctx, args).Result
}

// Run is Execute that also returns the typed outcome.
func (t *Tool) Run(ctx context.Context, args []byte) (out Outcome) {
	defer func() {
		if p := recover(); p != nil {
			// Log the panic and stack but not the arguments: they may hold
			// private text beyond the 50 characters the seed allows.
			t.log.Error("unexpected_error", "error", fmt.Sprint(p), "error_type", "panic",
				"stack", string(debug.Stack()))
			out = Outcome{Result: textResult(UnexpectedText, true), Err: fmt.Errorf("panic: %v", p)}
		}
	}()
	t.log.Debug("search_memory_execute_start", "arguments_bytes", len(args))

	start := time.Now()
	req, invalid := ParseArguments(args)
	if len(invalid) > 0 {
		fields := make([]string, len(invalid))
		for i, e := range invalid {
			fields[i] = e.Field
		}
		t.log.Warn("validation_error", "errors", (&InvalidError{invalid}).Error(), "fields", fields,
			"query_preview", preview(queryOf(args), logQueryRunes))
		return Outcome{Result: ValidationResult(invalid), Invalid: invalid}
	}
	t.log.Info("search_request_validated", "query_length", len([]rune(req.Query)), "limit", req.Limit,
		"has_filters", !req.Filters.Empty(), "validation_time_ms", ms(time.Since(start)))
	return t.search(ctx, req)
}

// Search runs an already validated request (the pane validates field by field).
func (t *Tool) Search(ctx context.Context, req Request) (out Outcome) {
	defer func() {
		if p := recover(); p != nil {
			t.log.Error("unexpected_error", "error", fmt.Sprint(p), "error_type", "panic",
				"stack", string(debug.Stack()))
			out = Outcome{Result: textResult(UnexpectedText, true), Request: req, Err: fmt.Errorf("panic: %v", p)}
		}
	}()
	return t.search(ctx, req)
}

func (t *Tool) search(ctx context.Context, req Request) Outcome {
	out := Outcome{Request: req}
	if t.core == nil {
		out.Err = &CoreError{Msg: "Memory database not initialized"}
	} else {
		start := time.Now()
		hits, err := t.core.SearchMemory(ctx, req)
		if err == nil {
			t.log.Info("search_completed", "result_count", len(hits), "query_preview", preview(req.Query, logQueryRunes),
				"search_time_ms", ms(time.Since(start)), "has_results", len(hits) > 0)
			out.Hits = hits
			fstart := time.Now()
			out.Result = FormatHits(hits)
			t.log.Debug("response_formatted", "format_time_ms", ms(time.Since(fstart)),
				"response_length", len(out.Result.Text()))
			return out
		}
		out.Err = err
	}
	var se *SearchError
	var ce *CoreError
	switch {
	case errors.As(out.Err, &se):
		t.log.Error("search_error", "error", se.Msg, "query", preview(req.Query, logQueryRunes), "limit", req.Limit)
		out.Result = textResult("Error: Search failed: "+se.Msg, true)
	case errors.As(out.Err, &ce):
		t.log.Error("core_error", "error", ce.Msg, "error_type", "CoreError")
		out.Result = textResult("Error: Processing error: "+ce.Msg, true)
	default:
		t.log.Error("unexpected_error", "error", out.Err.Error(), "error_type", fmt.Sprintf("%T", out.Err))
		out.Result = textResult(UnexpectedText, true)
	}
	return out
}

// ValidationResult is the seed's "Invalid input" response for the given failures.
func ValidationResult(invalid []FieldError) Result {
	return textResult("Error: Invalid input - "+(&InvalidError{invalid}).Error(), true)
}

// FormatHits renders hits exactly as the seed's _format_response does.
func FormatHits(hits []Hit) Result {
	if len(hits) == 0 {
		return textResult(NoResultsText, false)
	}
	var b strings.Builder
	b.WriteString("Found " + strconv.Itoa(len(hits)) + " results:\n")
	for i, h := range hits {
		b.WriteString("\n" + strconv.Itoa(i+1) + ". [Score: " + strconv.FormatFloat(h.Score, 'f', 2, 64) + "]")
		if h.Match != "" {
			// hybrid search only: keyword-only answers keep the seed's text
			b.WriteString(" [Match: " + h.Match + "]")
		}
		if len(h.Tags) > 0 {
			b.WriteString(" [Tags: " + strings.Join(h.Tags, ", ") + "]")
		}
		b.WriteString("\n" + Preview(h.Text) + "\n")
	}
	return textResult(b.String(), false)
}

// Preview is the seed's text preview: the first 200 characters, then "..."
// when the text is longer. Characters are code points, as in Python.
func Preview(text string) string { return preview(text, previewRunes) + ellipsis(text) }

func ellipsis(text string) string {
	n := 0
	for range text {
		n++
		if n > previewRunes {
			return "..."
		}
	}
	return ""
}

// preview cuts s after n code points.
func preview(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// queryOf extracts the raw query for the log preview, if it is a string.
func queryOf(args []byte) string {
	o, ok := object(args)
	if !ok {
		return ""
	}
	v, ok := o.get("query")
	if !ok {
		return ""
	}
	s, _ := jsonString(v)
	return s
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Unavailable is a Searcher whose every search fails with err; the CLI uses it
// when the database cannot be opened so the tool still answers in its format.
func Unavailable(err error) Searcher { return unavailable{classify(err)} }

type unavailable struct{ err error }

func (u unavailable) SearchMemory(context.Context, Request) ([]Hit, error) { return nil, u.err }
