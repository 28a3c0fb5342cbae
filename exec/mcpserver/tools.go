package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/memory"
	"github.com/vigil-dev/vigil/exec/search"
	"github.com/vigil-dev/vigil/exec/task"
)

// searchSchema is FR-LS-02a exactly.
var searchSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "pattern": { "type": "string", "minLength": 1 },
    "path": { "type": "string" },
    "case": { "type": "string", "enum": ["smart", "sensitive", "insensitive"], "default": "smart" },
    "fixed_strings": { "type": "boolean", "default": false },
    "word_regexp": { "type": "boolean", "default": false },
    "include_glob": { "type": "array", "items": { "type": "string" } },
    "exclude_glob": { "type": "array", "items": { "type": "string" } },
    "glob": { "type": "array", "items": { "type": "string" } },
    "recursive": { "type": "boolean", "default": true },
    "hidden": { "type": "boolean", "default": false },
    "follow": { "type": "boolean", "default": false },
    "no_ignore": { "type": "boolean", "default": false },
    "context": { "type": "integer", "minimum": 0, "default": 0 },
    "max_results": { "type": "integer", "minimum": 1, "default": 200 },
    "max_matches_per_file": { "type": "integer", "minimum": 1 },
    "max_files": { "type": "integer", "minimum": 1 },
    "max_file_size_bytes": { "type": "integer", "minimum": 1 },
    "timeout_ms": { "type": "integer", "minimum": 1, "default": 20000 },
    "fuzzy": { "type": "integer", "minimum": 1, "maximum": 4 }
  },
  "required": ["pattern"]
}`)

// search is seed 001's tool: the text is the response's content view, the
// structuredContent the response object.
func (s *server) search(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	r, err := search.DecodeRequest(args(req))
	if err == nil {
		var resp search.Response
		if resp, err = search.Run(ctx, r, s.d.SearchOptions, nil); err == nil {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: resp.Content}},
				StructuredContent: json.RawMessage(resp.AppendJSON(nil))}, nil
		}
	}
	var te *search.ToolError
	if !errors.As(err, &te) {
		te = &search.ToolError{Kind: search.ExecutionFailed, Message: err.Error()}
	}
	return toolError(string(te.Kind), te.Message), nil
}

var scopedSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "task_id": {"type": "string", "minLength": 1, "maxLength": 128, "description": "idempotency key; the lease's task_id"},
    "lease": {"type": "string", "description": "the lease JWT"},
    "query": {"type": "string", "minLength": 1, "maxLength": 4096, "description": "case-sensitive substring"},
    "target_scope": {"type": "string", "description": "an allowlisted scope name"},
    "max_results": {"type": "integer", "minimum": 1, "maximum": 1000}
  },
  "required": ["task_id", "lease", "query", "target_scope"]
}`)

// taskArgs splits a task tool's arguments into the manifest's parts. Values
// pass through untouched: the engine's checks (the seeds' order and messages)
// judge them.
type taskArgs struct {
	taskID, lease json.RawMessage
	inputs        map[string]json.RawMessage
	wait          time.Duration
}

func parseTaskArgs(raw []byte, inputs []string, wait bool) (taskArgs, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return taskArgs{}, errors.New("arguments: must be a JSON object")
	}
	a := taskArgs{taskID: m["task_id"], lease: m["lease"], inputs: map[string]json.RawMessage{}, wait: DefaultWait}
	delete(m, "task_id")
	delete(m, "lease")
	if wait {
		if w, ok := m["wait_seconds"]; ok {
			d, err := parseWait(w)
			if err != nil {
				return taskArgs{}, err
			}
			a.wait = d
			delete(m, "wait_seconds")
		}
	}
	for _, k := range inputs {
		if v, ok := m[k]; ok {
			a.inputs[k] = v
			delete(m, k)
		}
	}
	if len(m) > 0 {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return taskArgs{}, fmt.Errorf("arguments: unknown field %q", keys[0])
	}
	return a, nil
}

func parseWait(raw json.RawMessage) (time.Duration, error) {
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || string(raw) == "null" {
		return 0, errors.New("wait_seconds: must be a number")
	}
	if f < 0 || math.IsNaN(f) || f > MaxWait.Seconds() {
		return 0, fmt.Errorf("wait_seconds: must be between 0 and %d", int(MaxWait.Seconds()))
	}
	return time.Duration(f * float64(time.Second)), nil
}

func (a taskArgs) manifest(capID string) []byte {
	m := map[string]any{"capability_id": capID, "inputs": a.inputs}
	if a.taskID != nil {
		m["task_id"] = a.taskID
	}
	if a.lease != nil {
		m["lease"] = a.lease
	}
	b, _ := json.Marshal(m)
	return b
}

// source is how a submission names its surface: "mcp:<client name>" (the
// Approvals pane shows it; the audit entry's details keep it).
func source(req *mcp.CallToolRequest) string { return "mcp:" + clientName(req) }

func (s *server) queue() (approval.Submitter, *mcp.CallToolResult) {
	if s.d.Tasks == nil {
		return nil, toolError("ExecutionFailed", "the approval engine is not available: "+errOr(s.d.QueueErr, "not configured").Error())
	}
	return s.d.Tasks, nil
}

// scoped is seed 000's search through the queue's lease checks; the result
// is the signed task result.
func (s *server) scoped(capID string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		q, bad := s.queue()
		if bad != nil {
			return bad, nil
		}
		a, err := parseTaskArgs(args(req), []string{"query", "target_scope", "max_results"}, false)
		if err != nil {
			return toolError("BadArgs", err.Error()), nil
		}
		if refused := s.checkSubject(req, a, capID); refused != nil {
			return refused, nil
		}
		out, err := q.Submit(ctx, a.manifest(capID), source(req))
		if err != nil {
			return toolError("ExecutionFailed", err.Error()), nil
		}
		return outcomeResult(out), nil
	}
}

// outcomeResult: a result when there is one, else the outcome itself.
func outcomeResult(out approval.Outcome) *mcp.CallToolResult {
	if out.Result != nil {
		return jsonResult(out.Result, out.Result.Status != "SUCCESS")
	}
	return jsonResult(out, out.State == "rejected" || out.Error != nil)
}

func mediaSchema(capID string) json.RawMessage {
	props := `"task_id": {"type": "string", "minLength": 1, "maxLength": 128, "description": "idempotency key; the lease's task_id"},
    "lease": {"type": "string", "description": "the lease JWT; leave it out when this agent's token has a grant covering the call: Vigil mints the lease"},
    "target_device": {"type": "string", "description": "an allowlisted device id"},
    "wait_seconds": {"type": "number", "minimum": 0, "maximum": 600, "default": 30,
      "description": "how long to wait for the person's decision (never past the task's deadline)"}`
	required := `"task_id", "target_device"`
	switch capID {
	case "MEDIA_PLAY":
		props += `,
    "media_uri": {"type": "string", "description": "an absolute path or absolute URI"},
    "media_content_type": {"type": "string", "description": "optional content type (Home Assistant devices)"}`
		required += `, "media_uri"`
	case "MEDIA_SEEK":
		props += `,
    "position_seconds": {"type": "number", "minimum": 0}`
		required += `, "position_seconds"`
	default:
		props += `,
    "media_uri": {"type": "string", "description": "optional; checked when given"}`
	}
	return json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    ` + props + `
  },
  "required": [` + required + `]
}`)
}

func mediaInputs(capID string) []string {
	switch capID {
	case "MEDIA_PLAY":
		return []string{"target_device", "media_uri", "media_content_type"}
	case "MEDIA_SEEK":
		return []string{"target_device", "position_seconds"}
	}
	return []string{"target_device", "media_uri"}
}

// media submits a seed-004 task exactly as `vigil submit` does and waits for
// the person's decision.
func (s *server) media(capID string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		q, bad := s.queue()
		if bad != nil {
			return bad, nil
		}
		a, err := parseTaskArgs(args(req), mediaInputs(capID), true)
		if err != nil {
			return toolError("BadArgs", err.Error()), nil
		}
		if refused := s.checkSubject(req, a, capID); refused != nil {
			return refused, nil
		}
		if refused := s.grantLease(req, &a, capID); refused != nil {
			return refused, nil
		}
		out, err := q.Submit(ctx, a.manifest(capID), source(req))
		if err != nil {
			return toolError("ExecutionFailed", err.Error()), nil
		}
		if out.Result != nil || out.State == "rejected" {
			return outcomeResult(out), nil
		}
		return s.wait(ctx, req, q, out.TaskID, a.wait), nil
	}
}

var getTaskSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "task_id": {"type": "string", "minLength": 1, "maxLength": 128},
    "wait_seconds": {"type": "number", "minimum": 0, "maximum": 600, "default": 30}
  },
  "required": ["task_id"]
}`)

func (s *server) getTaskResult(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	q, bad := s.queue()
	if bad != nil {
		return bad, nil
	}
	var a struct {
		TaskID      string           `json:"task_id"`
		WaitSeconds *json.RawMessage `json:"wait_seconds"`
	}
	if err := decodeStrict(args(req), &a); err != nil {
		return toolError("BadArgs", err.Error()), nil
	}
	if a.TaskID == "" {
		return toolError("BadArgs", "task_id: required"), nil
	}
	wait := DefaultWait
	if a.WaitSeconds != nil {
		d, err := parseWait(*a.WaitSeconds)
		if err != nil {
			return toolError("BadArgs", err.Error()), nil
		}
		wait = d
	}
	return s.wait(ctx, req, q, a.TaskID, wait), nil
}

// wait reads the task until it is final or the wait ends (never long past
// the task's deadline: a wait that would outlast it stops once the expiry
// is recorded, AfterDeadline at most, so the expiry is what the agent
// gets), sending progress notifications each second when the client gave a
// progress token. It reads again when the queue's changes name the task,
// at the deadline, and every Poll as a backstop.
func (s *server) wait(ctx context.Context, req *mcp.CallToolRequest, q approval.Reader, id string, wait time.Duration) *mcp.CallToolResult {
	w := waiting{s: s, req: req, id: id, start: s.d.Now(), poll: s.d.Poll}
	w.until = w.start.Add(wait)
	if req != nil && req.Params != nil {
		w.token = req.Params.GetProgressToken()
	}
	var wake <-chan struct{}
	following := false
	timer := time.NewTimer(s.d.Poll) // set again before each pause
	defer timer.Stop()
	for {
		rec, res, err := status(q, id)
		if err == nil && !ownsTask(req, rec) {
			err = approval.ErrNotFound
		}
		if err != nil {
			if errors.Is(err, approval.ErrNotFound) {
				return toolError("BadArgs", fmt.Sprintf("task_id: no task %q", id))
			}
			return toolError("ExecutionFailed", err.Error())
		}
		if answer := w.answer(ctx, rec, res); answer != nil {
			return answer
		}
		if !following {
			// followed only by a call that waits; read again once
			// followed, so no change falls between the read and the feed
			following = true
			var leave func()
			if wake, leave, err = s.feed.wait(id); err != nil {
				s.d.Log.Warn("mcp: the queue's changes are not followed; a wait re-reads often", "err", err)
				w.poll = min(w.poll, unfollowedPoll)
			}
			defer leave()
			continue
		}
		w.note(ctx)
		timer.Reset(w.next(rec))
		select {
		case <-timer.C:
		case <-wake:
		case <-ctx.Done():
		case <-s.d.Stop:
		}
	}
}

// unfollowedPoll is how often a wait re-reads its task when the queue's
// changes cannot be followed (no file watch left, say).
const unfollowedPoll = 200 * time.Millisecond

// waiting is one wait's state.
type waiting struct {
	s            *server
	req          *mcp.CallToolRequest
	id           string
	token        any
	start, until time.Time
	end          time.Time // the wait's end as the task's deadline bounds it
	lastNote     time.Time
	poll         time.Duration // the backstop re-read
}

// answer is the call's answer once there is one: the signed result, the
// final state, or pending at the wait's end (nil: wait on).
func (w *waiting) answer(ctx context.Context, rec approval.Record, res *task.Result) *mcp.CallToolResult {
	deadline, _ := rec.Deadline()
	w.end = w.until
	if !deadline.IsZero() && deadline.Add(AfterDeadline).Before(w.end) {
		w.end = deadline.Add(AfterDeadline)
	}
	now := w.s.d.Now()
	over := !now.Before(w.end) || ctx.Err() != nil || w.s.stopping()
	if rec.State.Final() {
		if res != nil {
			return jsonResult(res, res.Status != "SUCCESS")
		}
		// A record that is final while log_from is set is being finished
		// (exec/approval/doc.go, F1): its signed result is stored next, so
		// the agent waits for it rather than getting a bare state.
		if rec.LogFrom == nil || over {
			return jsonResult(map[string]any{"task_id": w.id, "state": rec.State, "error": rec.Error}, true)
		}
		return nil
	}
	if over {
		return jsonResult(map[string]any{"task_id": w.id, "state": "pending",
			"expires_at": deadline.UTC().Format(time.RFC3339)}, false)
	}
	return nil
}

// note sends a progress notification, at most one a second.
func (w *waiting) note(ctx context.Context) {
	now := w.s.d.Now()
	if w.token == nil || w.req.Session == nil || now.Sub(w.lastNote) < time.Second {
		return
	}
	w.lastNote = now
	left := w.end.Sub(now).Round(time.Second)
	_ = w.req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: w.token,
		Progress: now.Sub(w.start).Seconds(), Total: w.end.Sub(w.start).Seconds(),
		Message: fmt.Sprintf("waiting for the person's decision on %s: %s left", w.id, left)})
}

// next is how long until the task is read again if no change comes first:
// the wait's end, the deadline (this home's queue expires a task read at
// it), the next progress notification, or Poll, whichever is soonest.
func (w *waiting) next(rec approval.Record) time.Duration {
	now := w.s.d.Now()
	d := min(w.poll, w.end.Sub(now))
	if deadline, _ := rec.Deadline(); deadline.After(now) {
		d = min(d, deadline.Sub(now))
	}
	if w.token != nil {
		d = min(d, time.Second)
	}
	return max(d, 0)
}

// searchMemory is search_memory as `vigil memory search` answers it.
func (s *server) searchMemory(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	r := s.memory.Execute(ctx, args(req))
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Text()}}, IsError: r.IsError}, nil
}

func (s *server) store() (*memory.Store, *mcp.CallToolResult) {
	if s.d.Memory == nil {
		return nil, toolError("ExecutionFailed", "the memory store is not available: "+errOr(s.d.MemoryErr, "not open").Error())
	}
	return s.d.Memory, nil
}

var addMemorySchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "text": {"type": "string", "minLength": 1, "maxLength": 100000},
    "tags": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 100}, "maxItems": 32},
    "source": {"type": "string", "maxLength": 100},
    "date": {"type": "string", "description": "creation day YYYY-MM-DD or RFC 3339 time (default: now)"}
  },
  "required": ["text"]
}`)

// auditReady refuses a memory write before it is made when the audit log
// cannot take its entry (its end cut or altered): memory writes are audited,
// so they fail closed as decisions do, never "stored but not audited".
func (s *server) auditReady(what string) *mcp.CallToolResult {
	if s.d.Audit == nil {
		return nil
	}
	if err := s.d.Audit.CheckEnd(); err != nil {
		return toolError("ExecutionFailed", fmt.Sprintf("%s refused, nothing was written: the audit log cannot record it: %v", what, err))
	}
	return nil
}

// audit records a memory write with the caller as actor: the token's agent
// ("agent:<name>", the client's reported name kept as "client"), else the
// MCP client ("mcp:<client name>"). auditReady checked the log first; a log
// that still cannot be appended to (a race with another writer, a full
// disk) fails the write's answer.
func (s *server) audit(req *mcp.CallToolRequest, event string, details map[string]any) error {
	if s.d.Audit == nil {
		return nil
	}
	details["source"] = "mcp"
	actor := "mcp:" + clientName(req)
	if agent := CallerAgent(req); agent != "" {
		actor = AgentSubject(agent)
		details["client"] = clientName(req)
	}
	_, err := s.d.Audit.Append(audit.Entry{Actor: actor, Event: event, Success: true,
		Details: audit.Details(details)})
	return err
}

func (s *server) addMemory(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	st, bad := s.store()
	if bad != nil {
		return bad, nil
	}
	var a struct {
		Text   *string  `json:"text"`
		Tags   []string `json:"tags"`
		Source string   `json:"source"`
		Date   string   `json:"date"`
	}
	if err := decodeStrict(args(req), &a); err != nil {
		return toolError("BadArgs", err.Error()), nil
	}
	if a.Text == nil {
		return toolError("BadArgs", "text: required"), nil
	}
	m := memory.NewMemory{Text: *a.Text, Tags: a.Tags, Source: a.Source}
	if a.Date != "" {
		t, err := memory.ParseTime(a.Date)
		if err != nil {
			return toolError("BadArgs", "date: "+err.Error()), nil
		}
		m.CreatedAt = t
	}
	if bad := s.auditReady("add_memory"); bad != nil {
		return bad, nil
	}
	id, err := st.Add(ctx, m)
	if err != nil {
		return memoryError(err), nil
	}
	got, err := st.Get(ctx, id)
	if err != nil {
		return memoryError(err), nil
	}
	if err := s.audit(req, "memory_added", map[string]any{"memory_id": id, "text_runes": len([]rune(got.Text)),
		"tags": len(got.Tags)}); err != nil {
		return toolError("ExecutionFailed", fmt.Sprintf("memory %d stored but not audited: %v", id, err)), nil
	}
	return jsonResult(got, false), nil
}

func memoryError(err error) *mcp.CallToolResult {
	var ie *memory.InvalidError
	if errors.As(err, &ie) {
		return toolError("BadArgs", err.Error())
	}
	if errors.Is(err, memory.ErrNotFound) {
		return toolError("NotFound", err.Error())
	}
	return toolError("ExecutionFailed", err.Error())
}

var listMemoriesSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
    "cursor": {"type": "string", "description": "next_cursor of the previous page"},
    "filters": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "tags": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 100}, "maxItems": 32},
        "source": {"type": "string", "minLength": 1, "maxLength": 100},
        "date_from": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
        "date_to": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}
      }
    }
  }
}`)

func (s *server) listMemories(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	st, bad := s.store()
	if bad != nil {
		return bad, nil
	}
	var a struct {
		Limit   *int   `json:"limit"`
		Cursor  string `json:"cursor"`
		Filters *struct {
			Tags     []string `json:"tags"`
			Source   string   `json:"source"`
			DateFrom string   `json:"date_from"`
			DateTo   string   `json:"date_to"`
		} `json:"filters"`
	}
	if err := decodeStrict(args(req), &a); err != nil {
		return toolError("BadArgs", err.Error()), nil
	}
	limit := 20
	if a.Limit != nil {
		if *a.Limit < 1 || *a.Limit > 100 {
			return toolError("BadArgs", fmt.Sprintf("limit: must be between 1 and 100, got %d", *a.Limit)), nil
		}
		limit = *a.Limit
	}
	var f memory.Filters
	if a.Filters != nil {
		f.Tags, f.Source = a.Filters.Tags, a.Filters.Source
		for _, d := range []struct {
			name, v string
			dst     *time.Time
		}{{"filters.date_from", a.Filters.DateFrom, &f.DateFrom}, {"filters.date_to", a.Filters.DateTo, &f.DateTo}} {
			if d.v == "" {
				continue
			}
			t, err := time.Parse("2006-01-02", d.v)
			if err != nil {
				return toolError("BadArgs", d.name+": must be a calendar day YYYY-MM-DD"), nil
			}
			*d.dst = t
		}
		if !f.DateFrom.IsZero() && !f.DateTo.IsZero() && f.DateTo.Before(f.DateFrom) {
			return toolError("BadArgs", "filters.date_to: before date_from"), nil
		}
	}
	var after *memory.Cursor
	if a.Cursor != "" {
		c, err := memory.ParseCursor(a.Cursor)
		if err != nil {
			return toolError("BadArgs", "cursor: "+err.Error()), nil
		}
		after = &c
	}
	list, next, err := st.List(ctx, f, limit, after)
	if err != nil {
		return memoryError(err), nil
	}
	if list == nil {
		list = []memory.Memory{}
	}
	out := map[string]any{"memories": list}
	if next != nil {
		out["next_cursor"] = next.String()
	}
	return jsonResult(out, false), nil
}

var deleteMemorySchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "properties": {"id": {"type": "integer", "minimum": 1}},
  "required": ["id"]
}`)

func (s *server) deleteMemory(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	st, bad := s.store()
	if bad != nil {
		return bad, nil
	}
	var a struct {
		ID *int64 `json:"id"`
	}
	if err := decodeStrict(args(req), &a); err != nil {
		return toolError("BadArgs", err.Error()), nil
	}
	if a.ID == nil {
		return toolError("BadArgs", "id: required"), nil
	}
	if bad := s.auditReady("delete_memory"); bad != nil {
		return bad, nil
	}
	if err := st.Delete(ctx, *a.ID); err != nil {
		if errors.Is(err, memory.ErrNotFound) {
			return toolError("NotFound", fmt.Sprintf("id: no memory %d", *a.ID)), nil
		}
		return memoryError(err), nil
	}
	if err := s.audit(req, "memory_deleted", map[string]any{"memory_id": *a.ID}); err != nil {
		return toolError("ExecutionFailed", fmt.Sprintf("memory %d deleted but not audited: %v", *a.ID, err)), nil
	}
	return jsonResult(map[string]any{"id": *a.ID, "deleted": true}, false), nil
}
