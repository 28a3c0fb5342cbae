// Package crashpoint kills the process at named points for fault-injection
// tests: with VIGIL_CRASHPOINT=name (or name@N for the Nth hit of that
// point), Hit(name) sends SIGKILL to its own process — a real kill, no
// deferred functions, no flushes, exactly what a power cut leaves behind
// minus the page cache. Without the variable Hit costs one map lookup.
package crashpoint

import (
	"os"
	"strconv"
	"strings"
	"sync"
)

// Env is the variable that arms a crash point.
const Env = "VIGIL_CRASHPOINT"

var (
	once   sync.Once
	target string
	nth    int
	mu     sync.Mutex
	hits   int
)

func load() {
	v := os.Getenv(Env)
	if v == "" {
		return
	}
	target, nth = v, 1
	if i := strings.LastIndexByte(v, '@'); i >= 0 {
		if n, err := strconv.Atoi(v[i+1:]); err == nil && n > 0 {
			target, nth = v[:i], n
		}
	}
}

// Hit marks a point just after a durable write. When VIGIL_CRASHPOINT names
// it, the process is killed on the chosen hit.
func Hit(name string) {
	once.Do(load)
	if target == "" || name != target {
		return
	}
	mu.Lock()
	hits++
	n := hits
	mu.Unlock()
	if n == nth {
		kill()
	}
}
