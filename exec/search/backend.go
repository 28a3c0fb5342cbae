package search

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vigil-dev/vigil/internal/atomicfile"
	"github.com/vigil-dev/vigil/internal/flock"
	"golang.org/x/sys/unix"
)

// BackendInfo describes one detected search binary.
type BackendInfo struct {
	Name    string `json:"name"`    // "ugrep" or "rg"
	Path    string `json:"path"`    // absolute path of the binary
	Version string `json:"version"` // e.g. "3.11.2"
	OK      bool   `json:"ok"`      // meets the SRD's minimum version
	Problem string `json:"problem,omitempty"`
}

var minVersion = map[string][2]int{"ugrep": {3, 0}, "rg": {13, 0}}

type cacheKey struct {
	path  string
	mtime time.Time
	size  int64
}

var (
	detectMu    sync.Mutex
	detectCache = map[cacheKey]BackendInfo{}
)

func envPath(env []string) string {
	if env == nil {
		return os.Getenv("PATH")
	}
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "PATH="); ok {
			return v
		}
	}
	return ""
}

// lookPath finds name in the PATH of env (or uses it as a path when it
// contains a slash).
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		if st, err := os.Stat(name); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return filepath.Abs(name)
		}
		return "", fmt.Errorf("%s: not an executable file", name)
	}
	for _, dir := range filepath.SplitList(envPath(env)) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found in PATH", name)
}

// probe runs "bin --version" once per binary file version (cached by path,
// mtime and size, in memory and in cacheFile when set) and reads the
// backend kind and version from it.
func probe(name string, env []string, cacheFile string) BackendInfo {
	p, err := lookPath(name, env)
	if err != nil {
		return BackendInfo{Name: name, Problem: err.Error()}
	}
	st, err := os.Stat(p)
	if err != nil {
		return BackendInfo{Name: name, Path: p, Problem: err.Error()}
	}
	key := cacheKey{p, st.ModTime(), st.Size()}
	detectMu.Lock()
	info, ok := detectCache[key]
	detectMu.Unlock()
	if ok {
		return info
	}
	fileKey := probeFileKey(p, st)
	if info, ok := readProbeCache(cacheFile)[fileKey]; ok && info.Path == p {
		detectMu.Lock()
		detectCache[key] = info
		detectMu.Unlock()
		return info
	}
	info = BackendInfo{Name: name, Path: p}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p, "--version")
	cmd.Args[0] = filepath.Base(name)
	if strings.Contains(filepath.Base(p), "ugrep") || filepath.Base(p) == "ug" {
		cmd.Args[0] = "ugrep" // never "ug", which reads a config file (see command)
	}
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		info.Problem = fmt.Sprintf("%s --version failed: %v", p, err)
		return info
	}
	first, _, _ := strings.Cut(string(out), "\n")
	fields := strings.Fields(first)
	if len(fields) >= 2 {
		switch fields[0] {
		case "ugrep":
			info.Name = "ugrep"
		case "ripgrep":
			info.Name = "rg"
		}
		info.Version = fields[1]
	}
	minV, known := minVersion[info.Name]
	if !known {
		info.Problem = fmt.Sprintf("%s is neither ugrep nor ripgrep (--version says %q)", p, first)
	} else if maj, mnr, ok := parseVersion(info.Version); !ok {
		info.Problem = fmt.Sprintf("%s: cannot read version from %q", p, first)
	} else if maj < minV[0] || (maj == minV[0] && mnr < minV[1]) {
		info.Problem = fmt.Sprintf("%s %s is older than the minimum %d.%d", info.Name, info.Version, minV[0], minV[1])
	} else {
		info.OK = true
	}
	detectMu.Lock()
	detectCache[key] = info
	detectMu.Unlock()
	// Only what the binary itself said is remembered, not a failure to run it.
	writeProbeCache(cacheFile, fileKey, info)
	return info
}

// The probe cache file lets each `vigil` process skip running the
// backends' --version (a few milliseconds each): a JSON object from a key
// naming the binary file's identity (path, size, times, inode; a
// replaced or upgraded binary has a new key) to what its probe found.

func probeFileKey(path string, st os.FileInfo) string {
	k := fmt.Sprintf("%s|%d|%d", path, st.Size(), st.ModTime().UnixNano())
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		k += fmt.Sprintf("|%d|%d|%d", sys.Ino, sys.Ctim.Sec, sys.Ctim.Nsec)
	}
	return k
}

// readProbeCache returns the cached probes; a missing or unreadable file
// is an empty cache (the probe runs again and rewrites it).
func readProbeCache(file string) map[string]BackendInfo {
	m := map[string]BackendInfo{}
	if file == "" {
		return m
	}
	data, err := os.ReadFile(file)
	if err != nil || json.Unmarshal(data, &m) != nil {
		return map[string]BackendInfo{}
	}
	return m
}

// writeProbeCache records one probe, best effort: the cache only saves
// time. Entries for binaries that no longer exist are dropped.
func writeProbeCache(file, key string, info BackendInfo) {
	if file == "" {
		return
	}
	// Read, merge and replace under a lock: concurrent searches probing
	// different binaries would otherwise each drop the other's entry.
	unlock, err := flock.Lock(file + ".lock")
	if err != nil {
		return
	}
	defer unlock()
	m := readProbeCache(file)
	for k, v := range m {
		if _, err := os.Stat(v.Path); err != nil {
			delete(m, k)
		}
	}
	m[key] = info
	if data, err := json.MarshalIndent(m, "", "  "); err == nil {
		_ = atomicfile.Write(file, append(data, '\n'), 0o600)
	}
}

func parseVersion(v string) (int, int, bool) {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	maj, err1 := strconv.Atoi(parts[0])
	mnr, err2 := strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	return maj, mnr, err1 == nil && err2 == nil
}

// DetectBackends reports every candidate binary in preference order: the
// configured binary, the configured fallback, then ugrep and rg on PATH.
// Duplicates (same resolved path) are listed once.
func DetectBackends(opts Options) []BackendInfo {
	var out []BackendInfo
	eachCandidate(opts, "", func(b BackendInfo) bool {
		out = append(out, b)
		return true
	})
	return out
}

// eachCandidate probes the candidates in preference order and calls fn until
// it returns false. Probing is lazy (each probe starts a process), and when
// want names a kind, candidates named after the other kind are skipped.
func eachCandidate(opts Options, want string, fn func(BackendInfo) bool) {
	names := []string{opts.Search.Binary, opts.Search.FallbackBinary, "ugrep", "rg"}
	seen := map[string]bool{}
	for _, n := range names {
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		if (want == "rg" && n == "ugrep") || (want == "ugrep" && n == "rg") {
			continue
		}
		info := probe(n, opts.Env, opts.ProbeCache)
		if info.Path != "" {
			if seen["path:"+info.Path] {
				continue
			}
			seen["path:"+info.Path] = true
		}
		if !fn(info) {
			return
		}
	}
}

const installHint = "install ugrep (>= 3.0) or ripgrep (>= 13.0), e.g. `apt-get install ugrep ripgrep` or `brew install ugrep ripgrep`, or set [tools.search] binary to its path"

// selectBackend applies FR-LS-EXE-01 / CFG-LS-01 and --backend.
func selectBackend(opts Options) (BackendInfo, error) {
	want := opts.Backend
	switch want {
	case "", "auto":
		want = ""
	case "ugrep", "rg":
	default:
		return BackendInfo{}, badArgs("backend: must be one of auto, ugrep, rg; got %q", opts.Backend)
	}
	var problems []string
	var found *BackendInfo
	eachCandidate(opts, want, func(b BackendInfo) bool {
		if !b.OK {
			problems = append(problems, b.Problem)
			return true
		}
		if want == "" || b.Name == want {
			found = &b
			return false
		}
		return true
	})
	if found != nil {
		return *found, nil
	}
	what := "no usable search backend"
	if want != "" {
		what = "backend " + want + " is not available"
	}
	return BackendInfo{}, execFailed("%s (%s); %s", what, strings.Join(problems, "; "), installHint)
}

// ugrepFormat makes ugrep print one JSON object per match (with -u): the
// quoted path, line number, and the match's byte offset in the file and
// length in bytes. The line itself is read from the file by Vigil: ugrep
// 3.11 cuts %J (and miscounts %k) on lines longer than its 256 KiB window,
// and printing the line once per match makes output quadratic on a long
// line with many matches (a minified file).
const ugrepFormat = `{"f":%h,"n":%n,"b":%b,"d":%d}%~`

// backendArgs builds the argument list (never through a shell). Files go
// last, after "--", each starting with "./".
func backendArgs(be BackendInfo, e effective, pat string, fixed bool, files []string) []string {
	var a []string
	threads := strconv.Itoa(backendThreads(len(files)))
	if be.Name == "rg" {
		// -a because Vigil decides what is binary; -s because case
		// folding is done in the pattern. Files come out in any order, each
		// file's messages contiguous; Vigil regroups them. --no-mmap: rg 13
		// maps explicit lists of up to 10 files, and its word matcher then
		// finds other empty matches (-w "b?" on "b\tx") than when it reads,
		// as the rg walk does.
		a = []string{"--json", "--no-config", "-j" + threads, "-a", "-s", "--no-ignore", "--hidden", "--no-mmap"}
		a = append(a, "-m", strconv.Itoa(e.lineCap()))
	} else {
		// ugrep's -m counts matches rather than lines when -u is given, so
		// the per-file cap is applied while parsing instead.
		a = []string{"-a", "-u", "-H", "-J" + threads, "--format=" + ugrepFormat}
		if e.fuzzy > 0 {
			a = append(a, "-Z"+strconv.Itoa(e.fuzzy))
		}
	}
	if fixed {
		a = append(a, "-F")
	}
	if e.word {
		a = append(a, "-w")
	}
	// The pattern is glued to its option: ugrep 3.11 reads an argument
	// starting with "---" as its ---FILE option even after -e, so `-e
	// ---X` loaded the config file $HOME/X.
	a = append(a, "--regexp="+pat, "--")
	return append(a, files...)
}

// backendThreads is how many threads one backend process gets: all cores
// for a long file list (two chunks run at once, and the OS shares the
// cores), one for a short one, where threads only cost start-up.
func backendThreads(files int) int {
	if files < 64 {
		return 1
	}
	return max(runtime.NumCPU(), 1)
}

// command prepares a backend process in its own process group so that
// cancelling kills it and anything it started.
func command(ctx context.Context, be BackendInfo, dir string, env []string, args []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, be.Path, args...)
	// Named by its kind, whatever the file is called: ugrep started as
	// "ug" reads a .ugrep config file from its working directory, which is
	// inside the searched tree (filters in it run commands).
	cmd.Args[0] = be.Name
	cmd.Dir = dir
	cmd.Env = env
	// Pdeathsig: a backend in its own process group outlives a Vigil that
	// is killed (a closed terminal, SIGKILL), and one stuck on a pattern
	// (see checkPattern) then spins forever. The signal follows the thread
	// that started the process; Go keeps its threads, except those a
	// goroutine locked and left locked, which Vigil never does.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 2 * time.Second
	return cmd
}

// checkPattern asks the backend itself whether the pattern compiles, by
// searching empty input: exit 2 means the regex (or flag combination) is
// invalid. pat is the pattern as Vigil spells it for the backend; the
// error names e.pattern, the person's own (see patternRefused).
//
// The check gets the search's timeout too (at least checkPatternMin, so
// that a bad pattern is still told apart under a tiny timeout_ms): ugrep
// 3.11 never finishes compiling some patterns (`(?:$){1,}é` loops at full
// CPU), and a check without a deadline, asked after the search itself
// timed out, hung the call for good. A check cut off by its deadline
// proves nothing against the pattern (nil): the search's own timeout then
// answers.
func checkPattern(ctx context.Context, be BackendInfo, e effective, pat string, fixed bool, env []string) error {
	refusal, err := compilePattern(ctx, be, e, pat, fixed, env)
	if err != nil || refusal == "" {
		return err
	}
	if strings.Contains(refusal, "bad_alloc") {
		// ugrep has no size limit of its own (rg refuses a regex that
		// compiles to over 100 MB): limitMemory stopped it.
		return badField(FieldPattern, "too complex for %s: compiling it took over its memory limit of %d MiB", be.Name, memoryLimit(e.maxSize)>>20)
	}
	return patternRefused(ctx, be, e, pat, refusal, env)
}

// compilePattern runs the backend over empty input and returns what it
// said on stderr when it refused the pattern ("" when it compiled, or when
// the check ran out of time).
func compilePattern(ctx context.Context, be BackendInfo, e effective, pat string, fixed bool, env []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, max(time.Duration(e.timeoutMS)*time.Millisecond, checkPatternMin))
	defer cancel()
	args := backendArgs(be, e, pat, fixed, []string{"-"})
	cmd := command(ctx, be, "", env, args)
	cmd.Stdin = bytes.NewReader(nil)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Start()
	if err == nil {
		limitMemory(cmd, e.maxSize)
		err = cmd.Wait()
	}
	code := exitCode(err)
	if code == 0 || code == 1 {
		return "", nil
	}
	if code < 0 {
		if ctx.Err() != nil {
			return "", nil
		}
		return "", execFailed("%s could not run: %v", be.Name, err)
	}
	msg := strings.TrimSpace(lossy(stderr.String()))
	if msg == "" {
		msg = fmt.Sprintf("%s exited with status %d", be.Name, code)
	}
	return msg, nil
}

// checkPatternMin is the shortest time a pattern check is given: a bad
// pattern fails in milliseconds, even on a loaded machine.
const checkPatternMin = 2 * time.Second

// backendMemoryBase is the memory (RLIMIT_DATA: heap and private
// mappings, not mapped files) a backend process may take beyond four times
// the largest file it may read. ugrep has no limit of its own on the
// automaton it builds: `\w{0,1000}` took 3 GB in 14 s before failing, and
// ugrep processes were killed by the kernel at 24 GB, which takes other
// programs' memory with them. A variable so that tests can lower it.
var backendMemoryBase int64 = 2 << 30

// memoryLimit is the RLIMIT_DATA a backend gets for files up to
// maxFileSize bytes (rg holds a line, and ugrep a window of it, in memory).
func memoryLimit(maxFileSize int64) int64 {
	if maxFileSize > (math.MaxInt64-backendMemoryBase)/4 {
		return math.MaxInt64 // a size cap this large means none
	}
	return backendMemoryBase + 4*max(maxFileSize, 0)
}

// limitMemory lowers a started backend's RLIMIT_DATA to memoryLimit. It
// is applied just after exec, before the backend has read its arguments
// far enough to compile anything; a failure (a sandbox that forbids
// prlimit) leaves the process as it was.
func limitMemory(cmd *exec.Cmd, maxFileSize int64) {
	if cmd.Process == nil {
		return
	}
	l := uint64(memoryLimit(maxFileSize))
	_ = unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_DATA, &unix.Rlimit{Cur: l, Max: l}, nil)
}

// exitCode extracts the process exit code; -1 when the process did not exit
// normally (spawn failure or killed).
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// Classification is the SRD §3.7 exit-code mapping.
type Classification string

const (
	OKWithMatches Classification = "ok_with_matches"
	OKNoMatches   Classification = "ok_no_matches"
	BackendError  Classification = "backend_error"
)

// Classify maps a backend exit code (FR-LS-ERR-03): 1 is not an error.
func Classify(code int) Classification {
	switch code {
	case 0:
		return OKWithMatches
	case 1:
		return OKNoMatches
	}
	return BackendError
}
