package search

import (
	"slices"
	"strings"
)

// walkRoot is the search root as the walking backend is given it,
// relative to its working directory (the sandbox root).
func (p *prepared) walkRoot() string {
	if rel := relSlash(p.pl.sandbox, p.pl.target); rel != "" {
		return "./" + rel
	}
	return "."
}

// walkable reports what both walks need: a directory searched without
// following links or include globs (rg's whitelist overrides beat ignore
// files; ugrep's would select differently), exclude globs only when the
// search root is the sandbox root (the walker reads them relative to the
// search root, the backend relative to its working directory, the
// sandbox root), no line end in the search root's path (the backend prints
// it in every path, and its lines cannot frame one), and every deny and
// exclude glob one the backend reads as the walker does (safe).
func (p *prepared) walkable(safe func(string) bool) bool {
	if p.pl.isFile || p.e.follow || len(p.e.include) > 0 {
		return false
	}
	if len(p.e.exclude) > 0 && p.pl.target != p.pl.sandbox {
		return false
	}
	if strings.IndexByte(relSlash(p.pl.sandbox, p.pl.target), '\n') >= 0 {
		return false
	}
	for _, g := range slices.Concat(p.denyGlobs, p.e.exclude) {
		if !safe(g) {
			return false
		}
	}
	for _, g := range p.denyGlobs {
		// The walker also denies a name whose NFC form a deny glob
		// matches; the backend matches the name as stored. Only these
		// ASCII characters are the NFC form of another character (U+212A
		// KELVIN SIGN, U+037E GREEK QUESTION MARK, U+1FEF GREEK VARIA), so
		// a glob of ASCII without them matches a name's NFC form only if
		// it matches the name.
		if strings.ContainsAny(g, "K;`") {
			return false
		}
	}
	return true
}

// What a walk's backend may read for nothing, in files over
// max_file_size_bytes, before the ordered path answers instead (the
// ordered path never opens them): see hugewatch.go. ugrep also reads
// ignored files (its own, smaller budget: ugwalk.go).
const walkTooLargeBudget = 16 << 20

// walkWaste counts the bytes of files a walk's backend reads for nothing.
type walkWaste struct{ tooLarge, ignored int64 }

// tooLargeUnfit says why the ordered path must answer instead, given an
// item the walker selected: a file over max_file_size_bytes that takes
// what the backend reads for nothing past walkTooLargeBudget.
func tooLargeUnfit(it item, waste *walkWaste) string {
	if !it.skip {
		return ""
	}
	return wasted(&waste.tooLarge, it.size, walkTooLargeBudget)
}

// wasted adds a file of size bytes that the backend reads for nothing to
// *total, and says so once that passes budget.
func wasted(total *int64, size, budget int64) string {
	if *total += max(size, 0); *total > budget {
		return "files the backend would read for nothing, past the budget"
	}
	return ""
}
