package sshgate

import (
	"net"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/time/rate"
)

// Operator is a person who may decide, known by the public keys they sign
// in with ([[operators]] in the config).
type Operator struct {
	Name string
	Keys []gossh.PublicKey
}

// roster finds the operator a key belongs to by the key's wire bytes: the
// same key, not one of the same type or comment.
type roster map[string]string

func newRoster(ops []Operator) roster {
	r := roster{}
	for _, op := range ops {
		for _, k := range op.Keys {
			r[string(k.Marshal())] = op.Name
		}
	}
	return r
}

// who is the operator holding k ("" and false for a key nobody listed).
func (r roster) who(k gossh.PublicKey) (string, bool) {
	if k == nil {
		return "", false
	}
	name, ok := r[string(k.Marshal())]
	return name, ok
}

// maxTracked bounds how many remote addresses the failure count remembers:
// a scan from many addresses cannot grow it without end.
const maxTracked = 4096

// failures counts failed sign-in attempts per remote IP in a token bucket:
// burst failures are taken at once, then one more each every; an address
// with no token left is refused before its handshake (and any key it offers
// on a connection already open is refused) until one comes back.
type failures struct {
	mu    sync.Mutex
	every rate.Limit
	burst int
	now   func() time.Time
	by    map[string]*rate.Limiter
}

func newFailures(burst int, every time.Duration, now func() time.Time) *failures {
	return &failures{every: rate.Every(every), burst: burst, now: now, by: map[string]*rate.Limiter{}}
}

// blocked says ip has used up its failed attempts for now.
func (f *failures) blocked(ip string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.by[ip]
	return l != nil && l.TokensAt(f.now()) < 1
}

// fail counts one failed attempt from ip.
func (f *failures) fail(ip string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	l := f.by[ip]
	if l == nil {
		if len(f.by) >= maxTracked {
			f.forget(now)
		}
		l = rate.NewLimiter(f.every, f.burst)
		f.by[ip] = l
	}
	l.AllowN(now, 1)
}

// forget drops the addresses whose bucket has filled up again (they are as
// if never seen), and when none has, the whole table: the bound holds, and
// an address dropped early gets its burst back, no more.
func (f *failures) forget(now time.Time) {
	for ip, l := range f.by {
		if l.TokensAt(now) >= float64(f.burst) {
			delete(f.by, ip)
		}
	}
	if len(f.by) >= maxTracked {
		clear(f.by)
	}
}

// hostOf is the IP of a remote address, the unit the failures are counted in
// (all ports of one address are one caller).
func hostOf(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	if a == nil {
		return ""
	}
	if h, _, err := net.SplitHostPort(a.String()); err == nil {
		return h
	}
	return a.String()
}

// conns counts the connections open per remote address.
type conns struct {
	mu    sync.Mutex
	limit int
	by    map[string]int
}

// take counts one more connection from ip, unless limit are open; release
// gives it back (once, however often it is called).
func (c *conns) take(ip string) (release func(), ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.by[ip] >= c.limit {
		return nil, false
	}
	c.by[ip]++
	return sync.OnceFunc(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.by[ip]--; c.by[ip] <= 0 {
			delete(c.by, ip)
		}
	}), true
}

// countedConn gives its place back when it closes.
type countedConn struct {
	net.Conn
	release func()
}

func (c *countedConn) Close() error {
	c.release()
	return c.Conn.Close()
}
