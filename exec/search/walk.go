package search

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// item is one step of the ordered walk: an eligible file (pos > 0) or a
// per-path error found while walking (pos == 0).
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
type walker struct {
	ctx              context.Context
	pl               place
	e                effective
	deny             globSet
	include, exclude globSet
	emit             func(item) bool
	pos              int64
	stopped          bool
}

type child struct {
	name  string
	key   string
	isDir bool
	info  fs.FileInfo
}

func (w *walker) send(it item) bool {
	if w.stopped {
		return false
	}
	if it.err == "" {
		w.pos++
		it.pos = w.pos
	}
	if !w.emit(it) || (it.pos > 0 && w.e.maxFiles > 0 && w.pos >= w.e.maxFiles) || w.ctx.Err() != nil {
		w.stopped = true
	}
	return !w.stopped
}

// relOrder returns the display path and backend argument of abs.
func (w *walker) names(abs string) (rel, arg string) {
	r := relSlash(w.pl.orderRoot, abs)
	return sortKey(r), "./" + r
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
	var stack []ignoreFile
	if !w.e.noIgnore {
		// Ignore files between the sandbox root and the search root apply too.
		dir := w.pl.sandbox
		for {
			stack = w.loadIgnores(stack, dir)
			if dir == w.pl.target {
				break
			}
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
	w.dir(w.pl.target, 0, stack, anc)
}

func (w *walker) loadIgnores(stack []ignoreFile, dir string) []ignoreFile {
	base := relSlash(w.pl.sandbox, dir)
	for _, n := range [...]string{".gitignore", ".ignore"} {
		if data, err := os.ReadFile(filepath.Join(dir, n)); err == nil {
			if f := parseIgnore(base, data); len(f.rules) > 0 {
				stack = append(stack[:len(stack):len(stack)], f)
			}
		}
	}
	return stack
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

func (w *walker) dir(abs string, depth int, stack []ignoreFile, anc []devIno) {
	if w.stopped {
		return
	}
	f, err := os.Open(abs)
	if err != nil {
		rel, _ := w.names(abs)
		w.send(item{rel: rel, err: "cannot read directory: " + errText(err)})
		return
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil && len(ents) == 0 {
		rel, _ := w.names(abs)
		w.send(item{rel: rel, err: "cannot read directory: " + errText(err)})
		return
	}
	kids := make([]child, 0, len(ents))
	var loopErrs []child
	for _, de := range ents {
		name := de.Name()
		if !w.e.hidden && strings.HasPrefix(name, ".") {
			continue
		}
		t := de.Type()
		var info fs.FileInfo
		isDir := t.IsDir()
		if t&fs.ModeSymlink != 0 {
			if !w.e.follow {
				continue
			}
			st, err := os.Stat(filepath.Join(abs, name))
			if err != nil {
				loopErrs = append(loopErrs, child{name: name, key: sortKey(name)})
				continue
			}
			info, isDir = st, st.IsDir()
		} else if !isDir && !t.IsRegular() {
			continue // fifos, sockets and devices are never searched
		}
		k := sortKey(name)
		if isDir {
			k += "/"
		}
		kids = append(kids, child{name: name, key: k, isDir: isDir, info: info})
	}
	slices.SortFunc(kids, func(a, b child) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	for _, c := range loopErrs {
		rel, _ := w.names(filepath.Join(abs, c.name))
		if !w.send(item{rel: rel, err: "broken symbolic link"}) {
			return
		}
	}
	for _, c := range kids {
		if w.stopped {
			return
		}
		p := filepath.Join(abs, c.name)
		relSandbox := relSlash(w.pl.sandbox, p)
		if w.deny.match(relSandbox, c.isDir) {
			continue
		}
		if !w.e.noIgnore && ignored(stack, relSandbox, c.isDir) {
			continue
		}
		relSearch := relSlash(w.pl.target, p)
		if w.exclude.match(relSearch, c.isDir) {
			continue // FR-LS-VAL-10: exclude prunes files and directories
		}
		if c.isDir {
			if !w.e.recursive {
				continue // FR-LS-VAL-09: depth 1
			}
			sub := anc
			if c.info != nil { // a followed symlink: guard against loops
				id, ok := idOf(c.info)
				if ok && slices.Contains(anc, id) {
					rel, _ := w.names(p)
					if !w.send(item{rel: rel, err: "file system loop found: symbolic link points to an ancestor"}) {
						return
					}
					continue
				}
				sub = append(anc[:len(anc):len(anc)], id)
			} else if w.e.follow {
				if fi, err := os.Stat(p); err == nil {
					if id, ok := idOf(fi); ok {
						sub = append(anc[:len(anc):len(anc)], id)
					}
				}
			}
			st := stack
			if !w.e.noIgnore {
				st = w.loadIgnores(stack, p)
			}
			w.dir(p, depth+1, st, sub)
			continue
		}
		if len(w.include) > 0 && !w.include.match(relSearch, false) {
			continue
		}
		// Size is checked when the file is opened for sniffing (in
		// parallel, one open instead of lstat+open) unless already known.
		size := int64(-1)
		if c.info != nil {
			size = c.info.Size()
		}
		rel, arg := w.names(p)
		if !w.send(item{abs: p, arg: arg, rel: rel, size: size, skip: w.e.maxSize > 0 && size > w.e.maxSize}) {
			return
		}
	}
}
