package search

import (
	"context"
	"os"
	"strings"
)

// walkTally is what Vigil's own walk says about the eligible files: rg 13
// reports no count of the files it searched ("searches" counts only files
// with matches), and the set checks that rg selected no file the walker
// would not have.
type walkTally struct {
	files    int64
	list     []string // raw paths relative to the order root, as walked
	over     bool     // max_files reached: the ordered path answers
	rgUnsafe bool     // an ignore file rg may read differently: the ordered path answers
	newline  bool     // a path with a line end, which rg's output cannot frame: the ordered path answers
	// A reason the ordered path answers, found as soon as the walker
	// meets it (tooLargeUnfit; for ugrep, ugwalk.go).
	unfit string
}

// listsAll reports whether the walker selected every one of rels.
func (t *walkTally) listsAll(rels []string) bool {
	found := t.listed(rels)
	for _, r := range rels {
		if !found[r] {
			return false
		}
	}
	return true
}

// listed reports which of rels the walker selected. One pass over the
// list against a set of the (usually fewer) rels: cheaper than sorting or
// hashing the whole walk.
func (t *walkTally) listed(rels []string) map[string]bool {
	found := make(map[string]bool, len(rels))
	for _, r := range rels {
		found[r] = false
	}
	for _, l := range t.list {
		if _, ok := found[l]; ok {
			found[l] = true
		}
	}
	return found
}

// tallyWalk runs the walker, in no particular order, without sniffing or
// searching anything. Past max_files it cancels rg, since the ordered
// path must answer. With sizes it learns every file's size, and hands
// over past walkTooLargeBudget of files over the cap (hugewatch.go says
// when that is needed).
func (p *prepared) tallyWalk(ctx context.Context, cancel func(), sizes bool) walkTally {
	t := walkTally{list: make([]string, 0, 1024)}
	e := p.e
	e.maxFiles = 0 // counted here
	ug := p.be.Name == "ugrep"
	var waste walkWaste
	unfit := func(why string) bool {
		t.unfit = why // the ordered path answers: stop both
		cancel()
		return false
	}
	w := &walker{ctx: ctx, pl: p.pl, e: e, deny: p.deny, include: p.include, exclude: p.exclude, unordered: true,
		sizes: sizes,
		emit: func(it item) bool {
			t.newline = t.newline || strings.IndexByte(it.arg, '\n') >= 0 || strings.IndexByte(it.rel, '\n') >= 0
			why := tooLargeUnfit(it, &waste)
			if ug && why == "" {
				why = p.ugrepUnfitItem(it)
			}
			if why != "" {
				return unfit(why)
			}
			if it.abs != "" {
				t.files++
				t.list = append(t.list, it.arg[2:])
			}
			if p.e.maxFiles > 0 && t.files >= p.e.maxFiles {
				t.over = true
				cancel()
				return false
			}
			return true
		}}
	if ug {
		w.ignored = func(c child, abs string) bool {
			if c.size < 0 && !c.isDir {
				if fi, err := os.Lstat(abs); err == nil {
					c.size = fi.Size()
				}
			}
			if why := p.ugrepUnfitIgnored(c, &waste); why != "" {
				return unfit(why)
			}
			return true
		}
	}
	w.run()
	// At max_files the ordered walk stops, and so reports nothing found
	// after the last file (an unreadable directory, say): it answers then.
	if p.e.maxFiles > 0 && t.files >= p.e.maxFiles {
		t.over = true
		cancel()
	}
	t.rgUnsafe = w.rgUnsafe
	return t
}
