package httpguard

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

func ok() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) })
}

func TestHostNamesTheListeningAddress(t *testing.T) {
	name, _ := os.Hostname()
	for _, c := range []struct {
		listen, host string
		want         bool
	}{
		{"127.0.0.1:9464", "127.0.0.1:9464", true},
		{"127.0.0.1:9464", "localhost:9464", true},
		{"127.0.0.1:9464", "[::1]:9464", true},
		{"127.0.0.1:9464", "LOCALHOST.:9464", true},
		{"127.0.0.1:9464", "localhost", true},
		{"127.0.0.1:9464", "rebind.attacker.example:9464", false},
		{"127.0.0.1:9464", "attacker.example", false},
		{"127.0.0.1:9464", "127.0.0.1:80", false},
		{"127.0.0.1:9464", "", false},
		{"localhost:9464", "127.0.0.1:9464", true},
		{"[::1]:9464", "localhost:9464", true},
		{"192.168.1.5:9464", "192.168.1.5:9464", true},
		{"192.168.1.5:9464", "localhost:9464", false},
		{"192.168.1.5:9464", "evil.example:9464", false},
		{"0.0.0.0:9464", "192.168.1.5:9464", true},
		{"0.0.0.0:9464", "localhost:9464", true},
		{"0.0.0.0:9464", "evil.example:9464", false},
		{":9464", name + ":9464", name != ""},
		{":9464", "evil.example:9464", false},
		{":9464", name + ".attacker.example:9464", false},
		{":9464", name + ".local:9464", name != ""},
	} {
		h := Host(ok(), c.listen)
		r := httptest.NewRequest("GET", "/metrics", nil)
		r.Host = c.host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if got := w.Code == http.StatusOK; got != c.want {
			t.Errorf("listen %s, Host %q: %d, want allowed=%v", c.listen, c.host, w.Code, c.want)
		}
		if w.Code == http.StatusForbidden && w.Header().Get("Connection") != "close" {
			t.Errorf("a refusal keeps the connection")
		}
	}
}

// A name listened on is accepted though the listener reports its address.
func TestHostAcceptsTheNameAskedFor(t *testing.T) {
	h := Host(ok(), "metrics.lan:9464", "192.168.1.5:9464")
	for host, want := range map[string]int{"metrics.lan:9464": 200, "192.168.1.5:9464": 200, "evil.example:9464": 403} {
		r := httptest.NewRequest("GET", "/metrics", nil)
		r.Host = host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("Host %s: %d, want %d", host, w.Code, want)
		}
	}
}

func TestOriginRefusesWebPages(t *testing.T) {
	h := Origin([]string{"https://allowed.example"}, ok())
	for _, c := range []struct {
		origin, site string
		want         int
	}{
		{"", "", 200},     // a program, not a browser
		{"", "none", 200}, // typed into the address bar
		{"https://allowed.example", "cross-site", 200},
		{"https://evil.example", "", 403},
		{"http://127.0.0.1:8080", "same-site", 403},
		{"null", "", 403},
		{"", "cross-site", 403},
		{"", "same-site", 403},
	} {
		r := httptest.NewRequest("POST", "/mcp", nil)
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if c.site != "" {
			r.Header.Set("Sec-Fetch-Site", c.site)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("Origin %q Sec-Fetch-Site %q: %d, want %d", c.origin, c.site, w.Code, c.want)
		}
	}
}

// A refused request's connection is closed after the answer, and a kept
// -alive connection that sends nothing is closed after IdleTimeout.
func TestRefusedConnectionIsClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := Server(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		Refuse(w, "unauthorized", http.StatusUnauthorized)
	}))
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("GET / HTTP/1.1\r\nHost: " + ln.Addr().String() + "\r\n\r\n"))
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != 401 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if _, err := br.ReadByte(); err == nil || strings.Contains(err.Error(), "timeout") {
		t.Fatalf("the connection stayed open after the refusal: %v", err)
	}
	if srv.IdleTimeout <= 0 || srv.ReadHeaderTimeout <= 0 {
		t.Fatalf("timeouts: %+v", srv)
	}
}
