package search

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// lossy converts bytes to valid UTF-8, replacing every byte that does not
// start a valid sequence with U+FFFD (FR-LS-ENC-01). Deterministic.
func lossy(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// sortKey is Appendix A's path_sort_key for a relative, slash-separated
// path: lossy UTF-8, then NFC. Compared bytewise.
func sortKey(rel string) string {
	s := lossy(rel)
	if norm.NFC.IsNormalString(s) {
		return s
	}
	return norm.NFC.String(s)
}

// place is where a request searches, resolved per Appendix A.
type place struct {
	sandbox   string // canonical sandbox root
	target    string // canonical search root (file or directory)
	isFile    bool
	orderRoot string // FR-LS-ORD-03
}

// canonicalRoot resolves the sandbox root: absolute, symlinks resolved.
func canonicalRoot(root string) (string, error) {
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", execFailed("sandbox root: cannot determine the working directory: %v", err)
		}
		root = wd
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", execFailed("sandbox root %q: %v", root, err)
	}
	c, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", execFailed("sandbox root %q: %v", root, err)
	}
	return c, nil
}

// deniedPath applies the deny list to a sandbox-relative path and its
// ancestors, as written and in NFC (a name stored decomposed is shown
// composed, so it is denied composed too).
func deniedPath(deny globSet, rel string, isDir bool) bool {
	return deny.matchAncestors(rel, isDir) || deny.matchAncestors(sortKey(rel), isDir)
}

// DenyMatcher compiles [sandbox] deny globs into the check a search applies to
// a sandbox-relative path, so a screen offering paths (completion) hides
// exactly what a search would refuse.
func DenyMatcher(deny []string) (func(rel string, isDir bool) bool, error) {
	nfc := make([]string, len(deny))
	for i, g := range deny {
		nfc[i] = norm.NFC.String(g) // as prepare: names are also matched in NFC
	}
	set, err := compileDeny(nfc)
	if err != nil {
		return nil, err
	}
	return func(rel string, isDir bool) bool { return deniedPath(set, rel, isDir) }, nil
}

func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// resolvePath is NormalizePathForKey plus FR-LS-VAL-03..05 and the deny list.
func resolvePath(reqPath *string, opts Options, deny globSet) (place, error) {
	var pl place
	root, err := canonicalRoot(opts.Root)
	if err != nil {
		return pl, err
	}
	pl.sandbox = root
	p := ""
	if reqPath != nil {
		p = *reqPath
	}
	joined, abs, err := joinInSandbox(root, opts.Root, p)
	if err != nil {
		return pl, err
	}
	target, rest, err := canonicalTarget(joined)
	if err != nil {
		// Not the underlying error: it could name where a link outside
		// the sandbox points.
		return pl, fieldError(ExecutionFailed, FieldPath, nil, "%q cannot be resolved", p)
	}
	if !within(root, target) {
		return pl, badField(FieldPath, "%q resolves outside the sandbox root through a symlink", p)
	}
	// Denied before anything about the file itself is looked at, so that
	// "denied" and "does not exist" can't tell which secrets exist.
	if rel := relSlash(root, target); deniedPath(deny, rel, false) || deniedPath(deny, rel, true) {
		return pl, badField(FieldPath, "%q is denied by the sandbox deny list", p)
	}
	if rest != "" {
		return pl, fieldError(ExecutionFailed, FieldPath, nil, "%q does not exist", p)
	}
	st, err := os.Stat(target)
	if err != nil {
		return pl, fieldError(ExecutionFailed, FieldPath, nil, "%q is not accessible: %v", p, err)
	}
	rel := relSlash(root, target)
	if deniedPath(deny, rel, st.IsDir()) {
		return pl, badField(FieldPath, "%q is denied by the sandbox deny list", p)
	}
	if err := checkReadable(target, st, p); err != nil {
		return pl, err
	}
	pl.target = target
	pl.isFile = !st.IsDir()
	switch {
	case abs && pl.isFile:
		pl.orderRoot = filepath.Dir(target)
	case abs:
		pl.orderRoot = target
	default:
		pl.orderRoot = root
	}
	return pl, nil
}

// joinInSandbox resolves the request's path p (relative to the sandbox
// root, or absolute) to a clean absolute path, refusing one that escapes
// the root as written. root is the root resolved, given the root as
// configured.
func joinInSandbox(root, given, p string) (joined string, abs bool, err error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", false, badField(FieldPath, "must not contain a NUL byte")
	}
	abs = filepath.IsAbs(p)
	joined = p
	if !abs {
		joined = filepath.Join(root, p)
	}
	joined = filepath.Clean(joined)
	// Contained as written, against the root as resolved or as given (an
	// absolute path may spell the root through its symlink; resolving it
	// later settles where it really is).
	spelled := root
	if r, err := filepath.Abs(given); err == nil && given != "" {
		spelled = filepath.Clean(r)
	}
	if !within(root, joined) && !(abs && within(spelled, joined)) {
		return "", false, badField(FieldPath, "%q escapes the sandbox root", p)
	}
	return joined, abs, nil
}

// canonicalTarget resolves the symlinks of path's deepest existing
// ancestor and reattaches the rest (non-empty when path does not exist).
func canonicalTarget(path string) (target, rest string, err error) {
	existing := path
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	canon, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", "", err
	}
	return filepath.Join(canon, rest), rest, nil
}

// checkReadable refuses a target that is neither a regular file nor a
// directory, or that cannot be opened; p is the path as requested.
func checkReadable(target string, st fs.FileInfo, p string) error {
	if st.IsDir() {
		f, err := os.Open(target)
		if err != nil {
			return fieldError(ExecutionFailed, FieldPath, nil, "%q is not readable: %v", p, err)
		}
		f.Close()
		return nil
	}
	if !st.Mode().IsRegular() {
		return badField(FieldPath, "%q is neither a regular file nor a directory", p)
	}
	f, err := os.Open(target)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return fieldError(ExecutionFailed, FieldPath, nil, "%q is not readable: permission denied", p)
		}
		return fieldError(ExecutionFailed, FieldPath, nil, "%q is not readable: %v", p, err)
	}
	f.Close()
	return nil
}

// relSlash is the slash-separated path of p below base ("" when equal).
func relSlash(base, p string) string {
	if p == base {
		return ""
	}
	r := strings.TrimPrefix(p, strings.TrimSuffix(base, "/")+"/")
	return filepath.ToSlash(r)
}
