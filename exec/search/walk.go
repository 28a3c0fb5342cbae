package search

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// item is one step of the ordered walk: an eligible file (pos > 0, which
// may carry an error such as a failed stat) or a per-path error found while
// walking (pos == 0, no abs).
type item struct {
	pos  int64  // 1-based position among eligible files (files_scanned)
	abs  string // path to open
	arg  string // path handed to the backend, relative to the order root
	rel  string // path.text: NFC, lossy, relative to the order root
	size int64  // -1 until the file is opened
	skip bool   // over max_file_size_bytes: counted, not searched
	err  string // non-empty: a per-path error for errors[]
}

type devIno struct{ dev, ino uint64 }

func idOf(fi fs.FileInfo) (devIno, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return devIno{}, false
	}
	return devIno{uint64(st.Dev), uint64(st.Ino)}, true
}

// walker enumerates the eligible file set in final order. Children are
// visited sorted by NFC name (directories keyed as "name/"), which yields
// the bytewise order of whole relative paths without sorting them all.
//
// Per-file work is kept to string slicing: a file's absolute path is built
// once as orderRoot + "/./" + rel, so that the backend argument ("./" + rel)
// and rel are substrings of it.
type walker struct {
	ctx              context.Context
	pl               place
	e                effective
	deny             globSet
	include, exclude globSet
	emit             func(item) bool
	unordered        bool // any order will do, and no display paths: skip NFC keys and sorting
	sizes            bool // learn each file's size while listing (see readDir)
	rgUnsafe         bool // an ignore file used syntax rg may read differently (see rgSafeGlob)
	// ignored (may be nil) hears of each entry an ignore rule skips, and
	// its path (a regular file's size is -1 unless sizes is set); false
	// stops the walk.
	ignored func(c child, abs string) bool
	pos     int64
	stopped bool

	prefix string // orderRoot + "/./"
	sbPre  string // sandbox-relative path of the order root + "/" ("" when equal)
	seCut  int    // bytes to cut from an order-relative path to get the search-relative one
}

type child struct {
	name   string
	key    string // sortKey(name), without the directory slash
	isDir  bool
	hidden bool // a dot name: skipped unless hidden is set or an ignore rule whitelists it
	broken bool // a followed symbolic link whose target is missing: reported, not searched
	info   fs.FileInfo
	size   int64 // a regular file's size when the walk asked for sizes, else -1
}

// cmpChild orders children by key, a directory's key followed by "/",
// then by raw name; it avoids building the "/" keys for every comparison.
func cmpChild(a, b child) int {
	n := min(len(a.key), len(b.key))
	if c := strings.Compare(a.key[:n], b.key[:n]); c != 0 {
		return c
	}
	// One key is a prefix of the other: compare the remainders with the
	// directory slash appended (short strings, built only here).
	if c := strings.Compare(a.key[n:]+dirSlash(a.isDir), b.key[n:]+dirSlash(b.isDir)); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

// keyOf is a name's sort key (its own name when unordered).
func (w *walker) keyOf(name string) string {
	if w.unordered {
		return name
	}
	return sortKey(name)
}

func dirSlash(d bool) string {
	if d {
		return "/"
	}
	return ""
}

func (w *walker) send(it item) bool {
	if w.stopped {
		return false
	}
	if it.abs != "" { // a file (possibly with an error): it counts (FR-LS-05e)
		w.pos++
		it.pos = w.pos
	}
	if !w.emit(it) || (it.pos > 0 && w.e.maxFiles > 0 && w.pos >= w.e.maxFiles) || w.ctx.Err() != nil {
		w.stopped = true
	}
	return !w.stopped
}

// names returns the display path and backend argument of abs.
func (w *walker) names(abs string) (rel, arg string) {
	r := relSlash(w.pl.orderRoot, abs)
	return sortKey(r), "./" + r
}

// dirPos is a directory being walked: its paths relative to the order root
// (raw and as sort key) and its absolute path.
type dirPos struct {
	abs    string
	rel    string // relative to the order root, raw bytes
	key    string // sortKey(rel)
	same   bool   // key == rel (no normalization needed below)
	absPre string // w.prefix + rel + "/" (or w.prefix at the root)
	// real is the directory's own path relative to the sandbox when it was
	// reached through a followed symlink (so its rel names the link):
	// deny globs are matched against it too. "" otherwise.
	real string
}

func (w *walker) run() {
	if w.pl.isFile {
		fi, err := os.Stat(w.pl.target)
		if err != nil {
			return
		}
		rel, arg := w.names(w.pl.target)
		w.send(item{abs: w.pl.target, arg: arg, rel: rel, size: fi.Size(), skip: w.e.maxSize > 0 && fi.Size() > w.e.maxSize})
		return
	}
	w.prefix = strings.TrimSuffix(w.pl.orderRoot, "/") + "/./"
	if r := relSlash(w.pl.sandbox, w.pl.orderRoot); r != "" {
		w.sbPre = r + "/"
	}
	if r := relSlash(w.pl.orderRoot, w.pl.target); r != "" {
		w.seCut = len(r) + 1
	}
	var stack []ignoreFile
	if !w.e.noIgnore {
		// Ignore files between the sandbox root and the search root apply
		// too; the search root's own are read by dir.
		dir := w.pl.sandbox
		for dir != w.pl.target {
			stack = w.loadIgnores(stack, dir, relSlash(w.pl.sandbox, dir), nil)
			next := relSlash(dir, w.pl.target)
			if i := strings.IndexByte(next, '/'); i >= 0 {
				next = next[:i]
			}
			dir = filepath.Join(dir, next)
		}
	}
	var anc []devIno
	if fi, err := os.Stat(w.pl.target); err == nil {
		if id, ok := idOf(fi); ok {
			anc = append(anc, id)
		}
	}
	rel := relSlash(w.pl.orderRoot, w.pl.target)
	key := sortKey(rel)
	d := dirPos{abs: w.pl.target, rel: rel, key: key, same: key == rel, absPre: w.prefix}
	if rel != "" {
		d.absPre = w.prefix + rel + "/"
	}
	w.dir(d, stack, anc)
}

// loadIgnores reads dir's ignore files (base: dir relative to the sandbox
// root, which their rules are relative to); present (when not nil) says which
// exist, from the directory listing, to save failing opens. A directory
// holding .git first drops the .gitignore files of its ancestors.
func (w *walker) loadIgnores(stack []ignoreFile, dir, base string, present map[string]bool) []ignoreFile {
	hasGit := present[".git"]
	if present == nil {
		_, err := os.Lstat(filepath.Join(dir, ".git"))
		hasGit = err == nil
	}
	if hasGit {
		stack = dropGitignores(stack)
	}
	for kind, n := range ignoreNames {
		if present != nil && !present[n] {
			continue
		}
		path := filepath.Join(dir, n)
		if !w.readableIgnoreFile(path, base) {
			// Not read, so that its lines can't hint at a denied or outside
			// file's content; rg would read it, so rg must not walk.
			w.rgUnsafe = true
			continue
		}
		if data, err := readRegular(path); err == nil {
			f := parseIgnore(base, data)
			w.rgUnsafe = w.rgUnsafe || !f.rgSafe
			if len(f.rules) > 0 {
				f.kind = ignoreKind(kind)
				stack = append(stack[:len(stack):len(stack)], f)
			}
		}
	}
	return stack
}

// readableIgnoreFile reports whether an ignore file may be read: it is not
// denied itself, and when it is a symbolic link, its target lies inside
// the sandbox and is not denied either (NFR-LS-SEC-01).
func (w *walker) readableIgnoreFile(path, base string) bool {
	rel := filepath.Base(path)
	if base != "" {
		rel = base + "/" + rel
	}
	if w.deny.match(rel, false) {
		return false
	}
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return true // a plain file (or gone: reading it fails anyway)
	}
	real, err := filepath.EvalSymlinks(path)
	return err == nil && within(w.pl.sandbox, real) && !w.deny.matchAncestors(relSlash(w.pl.sandbox, real), false)
}

func errText(err error) string {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// sandboxRel and searchRel turn a path relative to the order root into
// one relative to the sandbox root or the search root (the order root is
// one of them, or the search root's parent only when it is a file).
func (w *walker) sandboxRel(rel string) string {
	if w.sbPre == "" {
		return rel
	}
	return w.sbPre + rel
}

func (w *walker) searchRel(rel string) string { return rel[w.seCut:] }

// dir lists one directory and visits its entries in order: files are sent,
// directories walked depth-first.
func (w *walker) dir(d dirPos, stack []ignoreFile, anc []devIno) {
	if w.stopped || w.ctx.Err() != nil {
		// Checked here too, not only when a file is sent: a tree whose
		// files are all skipped must still stop on time.
		w.stopped = true
		return
	}
	kids, present, ok := w.list(d)
	if !ok {
		return
	}
	if !w.e.noIgnore && present != nil {
		// The base comes from d.rel: d.abs has a "/./" inside.
		base := strings.TrimSuffix(w.sbPre, "/")
		if d.rel != "" {
			base = w.sandboxRel(d.rel)
		}
		stack = w.loadIgnores(stack, d.abs, base, present)
	}
	if !w.unordered {
		slices.SortFunc(kids, cmpChild)
	}
	for i := range kids {
		if w.stopped || !w.visit(d, &kids[i], stack, anc) {
			return
		}
	}
}

// list reads d's entries as the children the walk may visit (fifos,
// sockets, devices and unfollowed or unsafe links left out), and which
// ignore files (and .git) are present. ok is false when d could not be
// read at all, which has been reported.
func (w *walker) list(d dirPos) (kids []child, present map[string]bool, ok bool) {
	ents, err := readDir(d.abs, w.sizes)
	if err != nil && len(ents) == 0 {
		w.send(item{rel: d.key, err: "cannot read directory: " + errText(err)})
		return nil, nil, false
	}
	kids = make([]child, 0, len(ents))
	for _, de := range ents {
		hidden := strings.HasPrefix(de.name, ".")
		if hidden {
			switch de.name {
			case ".gitignore", ".ignore", ".rgignore", ".git":
				if present == nil {
					present = map[string]bool{}
				}
				present[de.name] = true
			}
		}
		t := de.typ
		switch {
		case t&fs.ModeSymlink != 0:
			if !w.e.follow {
				continue
			}
			if c, ok := w.linkChild(d, de, hidden); ok {
				kids = append(kids, c)
			}
		case t.IsDir() || t.IsRegular():
			kids = append(kids, child{name: de.name, key: w.keyOf(de.name), isDir: t.IsDir(), hidden: hidden, size: de.size})
		default:
			// fifos, sockets and devices are never searched
		}
	}
	return kids, present, true
}

// linkChild is the child for a symbolic link the walk follows, or false
// when it is not followed.
func (w *walker) linkChild(d dirPos, de dirEntry, hidden bool) (child, bool) {
	name := de.name
	st, err := os.Stat(filepath.Join(d.abs, name))
	if err != nil {
		// Reported when visited, in order and only if the filters let the
		// name through; a link that leads outside the sandbox is not even
		// named (whether its target exists is not ours).
		target, rerr := os.Readlink(filepath.Join(d.abs, name))
		if rerr == nil && !filepath.IsAbs(target) {
			target = filepath.Join(d.abs, target)
		}
		if rerr == nil && within(w.pl.sandbox, filepath.Clean(target)) {
			return child{name: name, key: w.keyOf(name), hidden: hidden, broken: true, size: -1}, true
		}
		return child{}, false
	}
	if !st.IsDir() && !st.Mode().IsRegular() {
		return child{}, false // a link to a fifo, socket or device: never searched
	}
	// The sandbox holds for followed links too (NFR-LS-SEC-01): a link
	// whose target lies outside the sandbox root, or is denied under its
	// own name, is not followed.
	real, err := filepath.EvalSymlinks(filepath.Join(d.abs, name))
	if err != nil || !within(w.pl.sandbox, real) || w.deny.matchAncestors(relSlash(w.pl.sandbox, real), st.IsDir()) {
		return child{}, false
	}
	return child{name: name, key: w.keyOf(name), isDir: st.IsDir(), hidden: hidden, info: st, size: de.size}, true
}

// visit applies the deny, ignore, hidden and exclude rules to one child of
// d and then walks it (a directory) or sends it (a file). It returns false
// when the walk must stop.
func (w *walker) visit(d dirPos, c *child, stack []ignoreFile, anc []devIno) bool {
	abs := d.absPre + c.name
	rel := abs[len(w.prefix):] // relative to the order root
	relSandbox := w.sandboxRel(rel)
	key := rel
	same := d.same && c.key == c.name
	if !same {
		key = c.key
		if d.key != "" {
			key = d.key + "/" + c.key
		}
	}
	if w.deny.match(relSandbox, c.isDir) || (!isASCII(c.name) && w.deny.match(sortKey(relSandbox), c.isDir)) {
		return true // as stored and as shown (NFC)
	}
	real := "" // under a followed directory link: the entry's own path
	if d.real != "" && c.info == nil {
		real = d.real + "/" + c.name
		if w.deny.match(real, c.isDir) {
			return true
		}
	}
	white := false
	if !w.e.noIgnore && len(stack) > 0 {
		var ign bool
		if ign, white = ignoreMatch(stack, relSandbox, c.isDir); ign {
			if w.ignored != nil && !w.ignored(*c, abs) {
				w.stopped = true
				return false
			}
			return true
		}
	}
	if c.hidden && !w.e.hidden && !white {
		return true
	}
	relSearch := w.searchRel(rel)
	if w.exclude.match(relSearch, c.isDir) {
		return true // FR-LS-VAL-10: exclude prunes files and directories
	}
	if c.isDir {
		if !w.e.recursive {
			return true // FR-LS-VAL-09: depth 1
		}
		return w.descend(c, dirPos{abs: abs, rel: rel, key: key, same: same, absPre: abs + "/", real: real}, stack, anc)
	}
	return w.file(c, abs, key, relSearch)
}

// descend walks the child directory at sub, first refusing a followed
// link that leads back to one of its ancestors (anc).
func (w *walker) descend(c *child, sub dirPos, stack []ignoreFile, anc []devIno) bool {
	subAnc := anc
	if c.info != nil { // a followed symlink: guard against loops
		id, ok := idOf(c.info)
		if ok && slices.Contains(anc, id) {
			return w.send(item{rel: sub.key, err: "file system loop found: symbolic link points to an ancestor"})
		}
		subAnc = append(anc[:len(anc):len(anc)], id)
	} else if w.e.follow {
		if fi, err := os.Stat(sub.abs); err == nil {
			if id, ok := idOf(fi); ok {
				subAnc = append(anc[:len(anc):len(anc)], id)
			}
		}
	}
	if c.info != nil { // a followed link: where it really leads
		if r, err := filepath.EvalSymlinks(sub.abs); err == nil {
			sub.real = relSlash(w.pl.sandbox, r)
		}
	}
	w.dir(sub, stack, subAnc)
	return true
}

// file sends one file child that passed the include filter: a broken link
// as an error, anything else as an item to search (or to skip for size).
func (w *walker) file(c *child, abs, key, relSearch string) bool {
	if len(w.include) > 0 && !w.include.match(relSearch, false) {
		return true
	}
	if c.broken {
		return w.send(item{rel: key, err: "broken symbolic link"})
	}
	// The size is checked when the file is sniffed (one fstat on the open
	// file) unless the listing (sizes) or a followed symlink's stat already
	// gave it.
	it := item{abs: abs, arg: abs[len(w.prefix)-2:], rel: key, size: -1}
	switch {
	case c.info != nil:
		it.size = c.info.Size()
	case c.size >= 0:
		it.size = c.size
	}
	it.skip = it.size >= 0 && w.e.maxSize > 0 && it.size > w.e.maxSize
	return w.send(it)
}

// dirEntry is one name from readDir with its type bits.
type dirEntry struct {
	name string
	typ  fs.FileMode
	size int64 // -1 unless sizes were asked for and this is a regular file
}

// readDir lists a directory with raw getdents64 calls: os.File's poller
// registration and bookkeeping cost more than the listing itself on trees
// of small directories (the walk opens every one). Entries come in
// directory order; "." and ".." are left out. A type the file system does
// not report (DT_UNKNOWN) is read with lstat. With sizes, each regular
// file's size is read too, by fstatat on the open directory (no path to
// resolve again): cheaper than a stat of each path later.
func readDir(dir string, sizes bool) ([]dirEntry, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var out []dirEntry
	// On the stack, and zeroed per directory: 8 KiB holds most listings
	// (~200 names) and measured 3-4% faster walks than 32 KiB.
	buf := make([]byte, 8<<10)
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return out, err
		}
		if n <= 0 {
			return out, nil
		}
		for b := buf[:n]; len(b) >= 19; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			reclen := int(b[16]) | int(b[17])<<8
			if reclen < 19 || reclen > len(b) {
				return out, syscall.EIO
			}
			typ := b[18]
			nameBytes := b[19:reclen]
			if i := bytes.IndexByte(nameBytes, 0); i >= 0 {
				nameBytes = nameBytes[:i]
			}
			b = b[reclen:]
			name := string(nameBytes)
			if name == "." || name == ".." {
				continue
			}
			var mode fs.FileMode
			switch typ {
			case syscall.DT_REG:
			case syscall.DT_DIR:
				mode = fs.ModeDir
			case syscall.DT_LNK:
				mode = fs.ModeSymlink
			case syscall.DT_FIFO:
				mode = fs.ModeNamedPipe
			case syscall.DT_SOCK:
				mode = fs.ModeSocket
			case syscall.DT_CHR:
				mode = fs.ModeDevice | fs.ModeCharDevice
			case syscall.DT_BLK:
				mode = fs.ModeDevice
			default:
				fi, err := os.Lstat(filepath.Join(dir, name))
				if err != nil {
					continue // gone since the listing
				}
				mode = fi.Mode().Type()
			}
			size := int64(-1)
			if sizes && mode == 0 {
				var st unix.Stat_t
				if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
					size = st.Size
				}
			}
			out = append(out, dirEntry{name: name, typ: mode, size: size})
		}
	}
}

// readRegular reads a regular file (through symlinks) without ever
// blocking on a FIFO or reading a device that has no end: such a file is
// an error instead.
func readRegular(path string) ([]byte, error) {
	return readRegularInto(path, nil, 0)
}
