package cli

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/internal/testbin"
)

// getHost sends GET url with the Host header set to host.
func getHost(t *testing.T, url, host string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	return resp.StatusCode, string(b)
}

// /metrics and /healthz answer only a request naming the listening
// address: a web page that rebinds its own name to 127.0.0.1 sends its own
// name in Host and gets 403, so it cannot read what agents are doing.
func TestServeMetricsRefusesForeignHost(t *testing.T) {
	testbin.FullRunOnly(t, "builds and runs a real vigil serve")
	h := newCrashHome(t, testbin.Vigil(t))
	sc := h.startServe()
	addr := strings.TrimPrefix(sc.url, "http://")
	port := addr[strings.LastIndex(addr, ":")+1:]
	for _, path := range []string{"/metrics", "/healthz"} {
		for _, host := range []string{addr, "localhost:" + port} {
			if code, body := getHost(t, sc.url+path, host); code != http.StatusOK {
				t.Errorf("%s Host %s: %d %s", path, host, code, body)
			}
		}
		for _, host := range []string{"rebind.attacker.example:" + port, "attacker.example"} {
			if code, body := getHost(t, sc.url+path, host); code != http.StatusForbidden || strings.Contains(body, "abos_") {
				t.Errorf("%s Host %s: %d %q", path, host, code, body)
			}
		}
	}
}
