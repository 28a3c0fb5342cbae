// Package mcpserver is Vigil's MCP server: the tools agents call (seed 001's
// Search, seed 000's scoped searches, seed 002's memory, seed 004's media
// tasks that wait for a person), and a stdio transport that survives bad input.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/memory"
	"github.com/vigil-dev/vigil/exec/search"
)

// Deps is what the tools run on. A nil part (and its Err) makes the tools that
// need it answer with an error instead of failing the whole server: memory
// tools work on a home without keys, searches on a home without memory.db.
type Deps struct {
	Version string
	// Search runs seed 001's tool with the config's options.
	SearchOptions search.Options
	// Memory is the store; MemoryErr says why it is nil.
	Memory    *memory.Store
	MemoryErr error
	// Queue is this home's approval queue; QueueErr says why it (and
	// Tasks) is nil.
	Queue    *approval.Queue
	QueueErr error
	// Tasks is where the task tools submit and wait: the shared queue's
	// agent side when [queue] url is set; nil means Queue.
	Tasks approval.Submitter
	// Grants mints leases for agents' calls their [[agents.grants]]
	// cover (grants.go); nil mints none.
	Grants *Grants
	// Audit records memory writes; nil skips them (tests only).
	Audit *audit.Log
	Now   func() time.Time
	Log   *slog.Logger
	// Poll is how often a waiting call re-reads the task besides the
	// queue's changes, which wake it at once: a backstop for a change the
	// feed could not see (DefaultPoll when 0).
	Poll time.Duration
	// Stop, once closed, ends every wait at once: a call waiting for the
	// person answers with the task's state (pending and its expires_at), so
	// a server that is stopping answers its calls instead of cutting them,
	// and the agent asks get_task_result later. Nil: never.
	Stop <-chan struct{}
}

// Tool names: the contract with agents.
const (
	ToolSearch         = "Search"
	ToolSearchFiles    = "search_files"
	ToolSearchEmails   = "search_emails"
	ToolSearchDatasets = "search_datasets"
	ToolSearchMemory   = memory.ToolName
	ToolAddMemory      = "add_memory"
	ToolListMemories   = "list_memories"
	ToolDeleteMemory   = "delete_memory"
	ToolMediaPlay      = "media_play"
	ToolMediaPause     = "media_pause"
	ToolMediaStop      = "media_stop"
	ToolMediaSeek      = "media_seek"
	ToolGetTaskResult  = "get_task_result"
)

// SearchAliases are FR-LS-01's other names for Search: calls to them are
// answered as Search; tools/list shows Search once.
var SearchAliases = []string{"search", "rg", "ripgrep", "ugrep", "ug"}

// DefaultWait is how long a media call waits for the person by default.
const DefaultWait = 30 * time.Second

// MaxWait bounds wait_seconds.
const MaxWait = 600 * time.Second

// DefaultPoll is how often a waiting call re-reads its task when nothing
// woke it. A decision, an expiry by another process and the inbox wake it
// through the queue's change feed; the re-read is only a backstop.
const DefaultPoll = 5 * time.Second

// AfterDeadline is how long past a task's deadline a wait may go on for the
// expiry to be recorded: this home's queue records it when the task is read
// at its deadline, the shared queue's executor at its next pass. A wait
// never ends pending on a task whose deadline came within it, unless the
// expiry is not recorded by then.
const AfterDeadline = 10 * time.Second

type server struct {
	d      Deps
	memory *memory.Tool
	feed   *changeFeed // the queue's changes, shared by the waiting calls
}

// New returns the MCP server with every tool. It is safe to serve several
// sessions (stdio and HTTP clients) from it at once.
func New(d Deps) *mcp.Server {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Poll <= 0 {
		d.Poll = DefaultPoll
	}
	if d.Tasks == nil && d.Queue != nil {
		d.Tasks = d.Queue
	}
	s := &server{d: d}
	if d.Tasks != nil {
		s.feed = newChangeFeed(d.Tasks)
	}
	var core memory.Searcher = memory.Unavailable(errOr(d.MemoryErr, "memory store not open"))
	if d.Memory != nil {
		core = d.Memory
	}
	s.memory = memory.NewTool(core, d.Log)

	srv := mcp.NewServer(&mcp.Implementation{Name: "vigil", Title: "Vigil", Version: d.Version},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}})
	yes, no := ptr(true), ptr(false)
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: no}
	add := func(t *mcp.Tool, h mcp.ToolHandler) {
		srv.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
			defer func() {
				if p := recover(); p != nil {
					d.Log.Error("tool_panic", "tool", t.Name, "panic", fmt.Sprint(p))
					res, err = toolError("ExecutionFailed", "internal error"), nil
				}
			}()
			return h(ctx, req)
		})
	}
	add(&mcp.Tool{Name: ToolSearch, Title: "Search files (ugrep/ripgrep)",
		Description: "Search the files under the sandbox root with ugrep or ripgrep. " +
			"Also answered under the names " + strings.Join(SearchAliases, ", ") + ". " +
			"Result: the text view, and the response object (matches, counts, truncation) as structuredContent.",
		InputSchema: searchSchema, Annotations: readOnly}, s.search)
	for _, sc := range []struct{ name, capID, what string }{
		{ToolSearchFiles, "SEARCH_FILES", "file names in an allowlisted files scope"},
		{ToolSearchEmails, "SEARCH_EMAILS", "messages in an allowlisted mail scope"},
		{ToolSearchDatasets, "SEARCH_DATASETS", "records of an allowlisted dataset scope"},
	} {
		add(&mcp.Tool{Name: sc.name, Title: "Search " + strings.TrimPrefix(sc.name, "search_"),
			Description: "Search " + sc.what + " under a lease. Result: the signed task result " +
				"(structuredContent). Idempotent per task_id.",
			InputSchema: scopedSchema, Annotations: readOnly}, s.scoped(sc.capID))
	}
	add(&mcp.Tool{Name: ToolSearchMemory, Title: "Search memory",
		Description: "Search the person's stored memories by relevance (full-text, BM25). " +
			"Returns a numbered list with scores, tags and 200-character previews.",
		InputSchema: memory.InputSchema, Annotations: readOnly}, s.searchMemory)
	add(&mcp.Tool{Name: ToolAddMemory, Title: "Add a memory",
		Description: "Store one memory. Result: the stored memory (id, text, tags, source, created_at).",
		InputSchema: addMemorySchema,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: no, OpenWorldHint: no}}, s.addMemory)
	add(&mcp.Tool{Name: ToolListMemories, Title: "List memories",
		Description: "List memories newest first, filtered by tags, source and dates; pass next_cursor back as cursor for more.",
		InputSchema: listMemoriesSchema, Annotations: readOnly}, s.listMemories)
	add(&mcp.Tool{Name: ToolDeleteMemory, Title: "Delete a memory",
		Description: "Delete one memory by id.", InputSchema: deleteMemorySchema,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: yes, IdempotentHint: true, OpenWorldHint: no}}, s.deleteMemory)
	for _, m := range []struct{ name, capID, what string }{
		{ToolMediaPlay, "MEDIA_PLAY", "play media_uri on target_device"},
		{ToolMediaPause, "MEDIA_PAUSE", "pause target_device"},
		{ToolMediaStop, "MEDIA_STOP", "stop target_device"},
		{ToolMediaSeek, "MEDIA_SEEK", "seek target_device to position_seconds"},
	} {
		add(&mcp.Tool{Name: m.name, Title: strings.ReplaceAll(m.name, "_", " "),
			Description: "Ask the person to " + m.what + ". The task waits in Vigil's Approvals pane; " +
				"this call waits up to wait_seconds (default 30) for the decision, then returns the signed result, " +
				`or {"task_id","state":"pending","expires_at"}: call get_task_result then. ` +
				"Repeating the call with the same task_id and request never creates a second task.",
			InputSchema: mediaSchema(m.capID),
			Annotations: &mcp.ToolAnnotations{DestructiveHint: no, IdempotentHint: true, OpenWorldHint: yes}}, s.media(m.capID))
	}
	add(&mcp.Tool{Name: ToolGetTaskResult, Title: "Get a task's result",
		Description: "Wait up to wait_seconds (default 30) for a task's signed result; " +
			`{"task_id","state":"pending","expires_at"} if the person has not decided yet.`,
		InputSchema: getTaskSchema, Annotations: readOnly}, s.getTaskResult)

	srv.AddReceivingMiddleware(aliasMiddleware)
	return srv
}

// aliasMiddleware answers calls to Search's aliases as Search.
func aliasMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				for _, a := range SearchAliases {
					if r.Params.Name == a {
						r.Params.Name = ToolSearch
					}
				}
			}
		}
		return next(ctx, method, req)
	}
}

func ptr[T any](v T) *T { return &v }

// stopping says whether Deps.Stop is closed.
func (s *server) stopping() bool {
	select {
	case <-s.d.Stop:
		return true
	default:
		return false
	}
}

func errOr(err error, msg string) error {
	if err != nil {
		return err
	}
	return errors.New(msg)
}

// args returns the call's arguments; none at all is {}.
func args(req *mcp.CallToolRequest) []byte {
	if req == nil || req.Params == nil || len(req.Params.Arguments) == 0 || string(req.Params.Arguments) == "null" {
		return []byte(`{}`)
	}
	return req.Params.Arguments
}

// clientName is the MCP client's self-declared name, made safe to store and
// show: printable ASCII letters, digits and ".-_ ", at most 64 of them.
func clientName(req *mcp.CallToolRequest) string {
	name := ""
	if req != nil && req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil {
			name = p.ClientInfo.Name
		}
	}
	var b strings.Builder
	for _, r := range name {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(".-_ ", r)) {
			b.WriteRune(r)
		} else {
			b.WriteRune('?')
		}
		if b.Len() >= 64 {
			break
		}
	}
	if s := strings.TrimSpace(b.String()); s != "" {
		return s
	}
	return "unknown"
}

// toolError is the {"error":{"kind","message"}} result with isError.
func toolError(kind, msg string) *mcp.CallToolResult {
	return jsonResult(map[string]any{"error": map[string]string{"kind": kind, "message": msg}}, true)
}

// jsonResult returns v as structuredContent and as the text view.
func jsonResult(v any, isErr bool) *mcp.CallToolResult {
	b, err := json.Marshal(v)
	if err != nil {
		return toolError("ExecutionFailed", err.Error())
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b), IsError: isErr}
}

// decodeStrict decodes an arguments object rejecting unknown fields.
func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("arguments: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return errors.New("arguments: trailing data")
	}
	return nil
}
