package cli

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/testbin"
)

const guardInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`

// postMCP posts body to url with the token and the given extra headers.
func postMCP(t *testing.T, url, token, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Errorf("%v: %v", hdr, err)
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
	return resp.StatusCode, string(b)
}

// Web pages cannot use `vigil mcp --http`: a foreign Origin gets 403 even
// with the token (none is allowed unless --allow-origin names it), a Host
// that is not this server's gets 403, a refused connection is not kept
// alive, and a JSON-RPC batch is refused as on stdio.
func TestMcpHTTPRefusesWebPages(t *testing.T) {
	testbin.FullRunOnly(t, "builds and runs a real vigil mcp --http")
	h := mcpHome(t)
	const token = "guard-token-0123456789"
	url, _ := startHTTP(t, h, []string{"VIGIL_MCP_TOKEN=" + token}, "--allow-origin", "https://ok.example")
	addr := strings.TrimPrefix(url, "http://")
	port := addr[strings.LastIndex(addr, ":")+1:]
	for _, hdr := range []map[string]string{
		{"Origin": "https://evil.example"},
		{"Origin": "http://" + addr},
		{"Origin": "null"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Host": "rebind.attacker.example:" + port},
	} {
		if code, body := postMCP(t, url, token, guardInit, hdr); code != http.StatusForbidden {
			t.Errorf("%v: %d %s", hdr, code, body)
		}
	}
	if code, body := postMCP(t, url, token, guardInit, map[string]string{"Origin": "https://ok.example"}); code != http.StatusOK {
		t.Errorf("an allowed origin: %d %s", code, body)
	}
	code, body := postMCP(t, url, token, " \n["+guardInit+"]", nil)
	if code != http.StatusBadRequest || !strings.Contains(body, `"code":-32600`) || !strings.Contains(body, "batches are not supported") {
		t.Errorf("a batch: %d %s", code, body)
	}
	if code, body := postMCP(t, url, token, guardInit, nil); code != http.StatusOK {
		t.Errorf("a plain initialize: %d %s", code, body)
	}

	// an unauthenticated keep-alive connection is closed after its 401
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %d", resp.StatusCode)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("the connection stayed open after its 401: %v", err)
	}
}

// A bearer token shorter than 16 characters is refused before listening,
// naming VIGIL_MCP_TOKEN (or the token file) and the rule.
func TestMcpHTTPRefusesShortToken(t *testing.T) {
	h := newCLIHome(t)
	for _, tok := range []string{"x", "fifteen-chars-x"} {
		app := NewApp()
		app.HomeFlag, app.Cwd = h.home, h.home
		app.Getenv = func(k string) string {
			if k == "VIGIL_MCP_TOKEN" {
				return tok
			}
			return ""
		}
		if _, err := mcpToken(app); err == nil || !strings.Contains(err.Error(), "VIGIL_MCP_TOKEN") || !strings.Contains(err.Error(), "at least 16") {
			t.Errorf("token %q: %v", tok, err)
		}
	}
	cfg, _ := os.ReadFile(filepath.Join(h.home, "config.toml"))
	os.WriteFile(filepath.Join(h.home, "config.toml"), append(cfg, []byte("\n[mcp]\ntoken_file = \"tok.txt\"\n")...), 0o600)
	os.WriteFile(filepath.Join(h.home, "tok.txt"), []byte("short\n"), 0o600)
	if _, errs, code := runReal(t, h.home, "mcp", "--http", "127.0.0.1:0"); code != 2 || !strings.Contains(errs, "token_file") || !strings.Contains(errs, "at least 16") {
		t.Fatalf("short token_file: %d %s", code, errs)
	}
}
