package search

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A backend's --version runs once per binary version across processes:
// the probe cache file answers later probes, and a changed binary is
// probed again.
func TestProbeCacheSkipsRerunsAndNoticesChanges(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "runs")
	bin := filepath.Join(dir, "rg")
	script := func(version string) {
		body := "#!/bin/sh\necho run >> " + count + "\necho 'ripgrep " + version + "'\n"
		if err := os.WriteFile(bin, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	runs := func() int {
		data, _ := os.ReadFile(count)
		return strings.Count(string(data), "run")
	}
	forget := func() { // a new process: nothing in memory
		detectMu.Lock()
		detectCache = map[cacheKey]BackendInfo{}
		detectMu.Unlock()
	}
	env := []string{"PATH=" + dir}
	cache := filepath.Join(dir, "backends.json")

	script("13.0.0")
	forget()
	if info := probe("rg", env, cache); !info.OK || info.Version != "13.0.0" || runs() != 1 {
		t.Fatalf("first probe: %+v, %d runs", info, runs())
	}
	forget()
	if info := probe("rg", env, cache); !info.OK || info.Version != "13.0.0" || runs() != 1 {
		t.Fatalf("cached probe: %+v, %d runs", info, runs())
	}
	script("12.1.1") // replaced: another size and change time
	forget()
	if info := probe("rg", env, cache); info.OK || info.Version != "12.1.1" || runs() != 2 {
		t.Fatalf("after the upgrade: %+v, %d runs", info, runs())
	}
	// A corrupt cache is ignored and rewritten.
	if err := os.WriteFile(cache, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	forget()
	if info := probe("rg", env, cache); info.Version != "12.1.1" || runs() != 3 {
		t.Fatalf("corrupt cache: %+v, %d runs", info, runs())
	}
	forget()
	if info := probe("rg", env, cache); info.Version != "12.1.1" || runs() != 3 {
		t.Fatalf("rewritten cache: %+v, %d runs", info, runs())
	}
}
