package scope

import (
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/task"
)

// searchFiles walks a file tree and matches regular files by name only.
// Symlinks are rejected: neither reported nor followed. Directories are
// walked but never results. A subdirectory that cannot be read is skipped;
// only an unreadable root is SCOPE_UNAVAILABLE. Paths that are not valid
// UTF-8 are skipped, since a JSON id could not name them. Hits sort by the
// code points of their relative path; id = that path with "/" separators.
func searchFiles(r *run, sc config.ScopeConfig) error {
	fi, err := statScope(sc)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return task.Errorf(task.ScopeUnavailable, "scope %q: path %s is not a directory", sc.Name, sc.Path)
	}
	root := sc.Path
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, werr error) error {
		if werr != nil {
			if p == root {
				return task.Errorf(task.ScopeUnavailable, "scope %q: %v", sc.Name, unwrapPath(werr))
			}
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if err := r.tick(); err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !utf8.ValidString(rel) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // directories recurse; symlinks, devices and sockets are rejected
		}
		name := d.Name()
		at := strings.Index(name, r.q.Text)
		if at < 0 {
			return nil
		}
		return r.offer(cand{str: rel}, func() Hit {
			s, ms, me := snippet(name, at, len(r.q.Text))
			return Hit{ID: rel, Field: "name", Snippet: s, MatchStart: ms, MatchEnd: me}
		})
	})
}
