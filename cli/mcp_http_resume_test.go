package cli

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/testbin"
)

// sseEvent is one server-sent event: its id, name and data.
type sseEvent struct{ id, name, data, retry string }

// readEvents reads SSE events from sc until stop says so or the stream ends.
func readEvents(sc *bufio.Scanner, stop func(sseEvent) bool) []sseEvent {
	var all []sseEvent
	var e sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			all = append(all, e)
			if stop(e) {
				return all
			}
			e = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			e.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "retry: "):
			e.retry = strings.TrimPrefix(line, "retry: ")
		case strings.HasPrefix(line, "event: "):
			e.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			e.data += strings.TrimPrefix(line, "data: ")
		}
	}
	return all
}

// A media call waits for the person; its SSE stream drops; the person
// decides meanwhile; the client comes back with Last-Event-ID and gets the
// answer. The events carry ids after a priming event (MCP 2025-11-25),
// which tells the client how long to wait before resuming (retry).
func TestMcpHTTPResumesDroppedStream(t *testing.T) {
	testbin.FullRunOnly(t, "builds and runs a real vigil mcp --http")
	h := mcpHome(t)
	const token = "resume-token-0123456789"
	url, _ := startHTTP(t, h, []string{"VIGIL_MCP_TOKEN=" + token})
	checkResume(t, h, url, token, "agent:mcp")
}

// checkResume drops a waiting media call's stream, approves the task, and
// resumes the stream with Last-Event-ID: the answer comes. sub is the
// lease's.
func checkResume(t *testing.T, h *crashHome, url, token, sub string) {
	client := &http.Client{Timeout: 60 * time.Second}
	send := func(method, body string, hdr map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := send("POST", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"resumer","version":"1"}}}`, nil)
	session := resp.Header.Get("Mcp-Session-Id")
	init := readEvents(bufio.NewScanner(resp.Body), func(e sseEvent) bool { return strings.Contains(e.data, `"id":1`) })
	resp.Body.Close()
	if session == "" || len(init) < 2 || init[0].name != "prime" || init[0].id == "" || init[len(init)-1].id == "" {
		t.Fatalf("session %q, events %+v: want a priming event and ids", session, init)
	}
	hdr := map[string]string{"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
	send("POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr).Body.Close()

	const id = "mcp-resume-1"
	lease := strings.TrimSpace(h.must(0, "lease", "issue", "--sub", sub, "--task-id", id, "--cap", "MEDIA_PLAY", "--ttl", "1h"))
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"media_play","arguments":{"task_id":"` + id +
		`","lease":"` + lease + `","media_uri":"/media/song.mp3","target_device":"living-room","wait_seconds":60}}}`
	resp = send("POST", call, hdr)
	first := readEvents(bufio.NewScanner(resp.Body), func(sseEvent) bool { return true })
	resp.Body.Close() // the stream drops while the call waits for the person
	if len(first) != 1 || first[0].name != "prime" || first[0].id == "" || first[0].retry != "2000" {
		t.Fatalf("call stream began with %+v, want a priming event with an id and retry: 2000", first)
	}
	h.waitEvent(id, "submitted", 10*time.Second)
	h.must(0, "approve", id, "--yes")

	hdr["Last-Event-ID"] = first[0].id
	resp = send("GET", "", hdr)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("resume: %d", resp.StatusCode)
	}
	rest := readEvents(bufio.NewScanner(resp.Body), func(e sseEvent) bool { return strings.Contains(e.data, `"id":2`) })
	last := rest[len(rest)-1]
	if !strings.Contains(last.data, `"id":2`) || !strings.Contains(last.data, `SUCCESS`) || last.id == "" {
		t.Fatalf("after resuming: %+v", rest)
	}
}
