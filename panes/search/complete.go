package searchpane

import (
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// completion is the directory listing that completes the path field, read
// off the UI goroutine (listDirs) for the value it answers.
type completion struct {
	value string   // the path field's value it was listed for
	dir   string   // value up to its last slash
	names []string // matching directory names, sorted, none denied
}

type completionMsg struct{ c completion }

// completions is the listing for the field's current value, if it has
// arrived; View and → read only this, never the disk.
func (c *composer) completions() (dir string, names []string) {
	v := c.inputs[fPath].Value()
	if c.compl.value != v {
		return "", nil
	}
	return c.compl.dir, c.compl.names
}

// listCompletions asks for the listing of the path field's directory when
// the field is focused and its value changed since the last listing.
func (p *Pane) listCompletions() tea.Cmd {
	v := p.composer.inputs[fPath].Value()
	if p.focus != focusComposer || p.composer.field != fPath || p.composer.complWant == v {
		return nil
	}
	p.composer.complWant = v
	root, denied := p.root, p.opts.Denied
	if denied == nil {
		denied = conservativeDeny(p.opts.Search.Deny)
	}
	return func() tea.Msg { return completionMsg{c: listDirs(root, v, denied)} }
}

// complete extends the path field like a shell: a single candidate
// completes with a slash, several complete their common prefix. It reports
// whether the field changed.
func (c *composer) complete() bool {
	v := c.inputs[fPath].Value()
	dir, names := c.completions()
	if len(names) == 0 {
		return false
	}
	names = append([]string(nil), names...)
	next := dir + names[0] + "/"
	if len(names) > 1 {
		common := names[0]
		for _, n := range names[1:] {
			for !strings.HasPrefix(n, common) {
				common = common[:len(common)-1]
			}
		}
		next = dir + common
	}
	if next == v {
		return false
	}
	c.inputs[fPath].SetValue(next)
	return true
}

// listDirs lists the directories under root that complete value (hidden
// ones only when asked for with a leading dot), leaving out every one the
// deny list hides: completion never names what the search may not touch.
func listDirs(root, value string, denied func(rel string, isDir bool) bool) completion {
	c := completion{value: value}
	prefix := value
	if i := strings.LastIndex(value, "/"); i >= 0 {
		c.dir, prefix = value[:i+1], value[i+1:]
	}
	abs := filepath.Join(root, filepath.FromSlash(c.dir))
	if rel, err := filepath.Rel(root, abs); err != nil || strings.HasPrefix(rel, "..") {
		return c
	}
	ents, err := os.ReadDir(abs)
	if err != nil {
		return c
	}
	for _, e := range ents {
		name := e.Name()
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			if st, err := os.Stat(filepath.Join(abs, name)); err == nil && st.IsDir() {
				isDir = true
			}
		}
		if !isDir || !strings.HasPrefix(name, prefix) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(prefix, ".")) {
			continue
		}
		rel := path.Clean(c.dir + name)
		if denied(rel, true) {
			continue
		}
		c.names = append(c.names, name)
	}
	sort.Strings(c.names)
	return c
}

// conservativeDeny is the pane's own reading of [sandbox] deny globs, for
// when the engine's matcher is not injected (Options.Denied): a name is
// hidden when any glob, stripped of a leading "**/" and a trailing "/",
// matches the path or any of its segments, ignoring case. It can hide more
// than the engine would, never less: a completion is only a convenience.
func conservativeDeny(globs []string) func(rel string, isDir bool) bool {
	var pats []string
	for _, g := range globs {
		g = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(g), "**/"), "/"))
		if g != "" {
			pats = append(pats, g)
		}
	}
	return func(rel string, _ bool) bool {
		rel = strings.ToLower(rel)
		cands := append([]string{rel}, strings.Split(rel, "/")...)
		for _, pat := range pats {
			for _, c := range cands {
				if ok, _ := path.Match(pat, c); ok {
					return true
				}
			}
		}
		return false
	}
}
