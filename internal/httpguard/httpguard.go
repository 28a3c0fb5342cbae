// Package httpguard keeps web pages away from Vigil's local HTTP servers
// (`vigil serve --metrics`, `vigil mcp --http`): a page the person opens
// can make their browser send requests to loopback, and, by DNS rebinding,
// read the answers. Host checks that the request names the listening
// address, Origin refuses requests a web page sent, and Server sets the
// timeouts that keep idle connections from being held open.
package httpguard

import (
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"
)

// Timeouts of Server: a request's header must arrive within ReadHeaderTimeout,
// and a keep-alive connection with no request is closed after IdleTimeout.
// There is no read or write timeout for the whole request: an MCP call that
// waits for the person streams its answer for minutes.
const (
	ReadHeaderTimeout = 5 * time.Second
	IdleTimeout       = 30 * time.Second
)

// Server is an http.Server for h with the timeouts above.
func Server(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: ReadHeaderTimeout, IdleTimeout: IdleTimeout}
}

// Refuse answers a refused request with code and closes the connection
// after it: a client that was refused gets no kept-alive connection.
func Refuse(w http.ResponseWriter, msg string, code int) {
	w.Header().Set("Connection", "close")
	http.Error(w, msg, code)
}

// Host lets through requests whose Host header names the listening address
// (host:port as asked for, and as listened on: both, since a name resolves
// to the address the listener reports): the same host (any spelling of
// loopback for a loopback address: localhost, 127.0.0.1, [::1]), an IP
// address when listening on every interface, or this machine's host name
// (or name.local) there. A Host with a port must name the listening port.
// Any other name is what DNS rebinding sends (the attacker's name now
// pointing at loopback): 403.
func Host(next http.Handler, listen ...string) http.Handler {
	type addr struct{ host, port string }
	var addrs []addr
	for _, l := range listen {
		h, p, err := net.SplitHostPort(l)
		if err != nil {
			h = l
		}
		addrs = append(addrs, addr{h, p})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, a := range addrs {
			if hostNames(r.Host, a.host, a.port) {
				next.ServeHTTP(w, r)
				return
			}
		}
		Refuse(w, "forbidden: the Host header does not name this server", http.StatusForbidden)
	})
}

func hostNames(hostHeader, lhost, lport string) bool {
	host, port, err := net.SplitHostPort(hostHeader)
	if err != nil {
		host, port = strings.TrimSuffix(strings.TrimPrefix(hostHeader, "["), "]"), ""
	}
	if port != "" && lport != "" && lport != "0" && port != lport {
		return false
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "" {
		return false
	}
	if strings.EqualFold(host, lhost) {
		return true
	}
	lip, ip := net.ParseIP(lhost), net.ParseIP(host)
	loopback := func(h string, ip net.IP) bool { return h == "localhost" || (ip != nil && ip.IsLoopback()) }
	switch {
	case loopback(lhost, lip):
		return loopback(host, ip)
	case lip != nil && !lip.IsUnspecified():
		return ip != nil && ip.Equal(lip)
	case lhost == "" || (lip != nil && lip.IsUnspecified()):
		// every interface: any address of this machine, loopback, or its name
		if ip != nil || host == "localhost" {
			return true
		}
		name, err := os.Hostname()
		name = strings.ToLower(name)
		// exactly: "name.attacker.example" is a name an attacker can rebind
		return err == nil && name != "" && (host == name || host == name+".local")
	}
	return false
}

// Origin refuses (403) a request carrying an Origin header not in allowed
// ("scheme://host[:port]", compared exactly), and one a browser marks as
// sent from another site (Sec-Fetch-Site cross-site or same-site) without
// one: that is a web page, and no web page is a client unless allowed. The
// MCP specification asks servers to validate Origin this way.
func Origin(allowed []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		site := r.Header.Get("Sec-Fetch-Site")
		switch {
		case origin != "" && !slices.Contains(allowed, origin):
			Refuse(w, "forbidden: requests from web pages (Origin "+sanitize(origin)+") are not allowed", http.StatusForbidden)
			return
		case origin == "" && (site == "cross-site" || site == "same-site"):
			Refuse(w, "forbidden: requests from web pages are not allowed", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sanitize keeps an echoed header printable and short.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= 100 {
			b.WriteString("…")
			break
		}
		if r < 0x20 || r == 0x7f || r > 0x7e {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}
