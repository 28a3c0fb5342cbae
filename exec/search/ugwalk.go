package search

import (
	"slices"
	"strconv"
	"strings"
)

// The ugrep walk: the rg walk (rgwalk.go, run by walkrun.go) with ugrep walking the tree
// (-r) on all cores, instead of being handed Vigil's ordered file lists,
// which cost ugrep's slower explicit-path mode plus Vigil's stat of every
// file before the search. The run, the reading of matched files for their
// lines, the final sort and every reason to hand over to the ordered path
// are the rg walk's; what differs is how ugrep is made to select files.
//
// ugrep 3.11 reads ignore files by rules of its own, not rg's (which
// Vigil's walker follows), so it is told to read none: it searches a
// superset of Vigil's files, and what it reports from a file Vigil's
// walker did not select is dropped. What must not be searched at all is
// excluded up front: the deny globs (and the exclude globs) become
// --exclude and --exclude-dir, which read globs of "*", "**", "/" and
// plain names as gitignore does (ugrepSafeGlob); hidden names unless
// hidden is set; symbolic links (-p: none followed, as without follow).
// Where the superset would be wrong or wasteful, the ordered path
// answers; the walker (which learns every file's size as it lists it,
// since ugrep has no size filter) reports each reason as soon as it meets
// it, and ugrep is stopped (ugrepUnfitItem, ugrepUnfitIgnored):
//   - a hidden file the walker selected though hidden is off (an ignore
//     file whitelisted it, and ugrep skipped it);
//   - a directory an ignore rule prunes (ugrep would search its whole
//     subtree for nothing: node_modules);
//   - files over max_file_size_bytes, or ignored, past their budgets
//     (walkTooLargeBudget, ugrepIgnoredBudget: ugrep reads them for
//     nothing);
//   - a per-path error from the walker, or anything on ugrep's stderr (an
//     unreadable file or directory: the ordered path names each failing
//     file itself).
//
// Matched files are read, sniffed and decoded exactly as on the ordered
// path (finishFile): ugrep runs with -a there too, so a text file's
// matches are the same whether it was listed or walked.

// ugrepWalkEligible reports whether ugrep can walk the tree for this
// request.
func (p *prepared) ugrepWalkEligible() bool {
	if p.be.Name != "ugrep" || !p.walkable(ugrepSafeGlob) {
		return false
	}
	// A hidden search root: whether ugrep enters it is not the walker's
	// rule.
	return p.e.hidden || !hasHiddenPart(relSlash(p.pl.sandbox, p.pl.target))
}

// ugrepSafeGlob reports whether ugrep's --exclude reads g as Vigil's
// walker does: rgSafeGlob's shapes, without what ugrep's glob options
// could read as more than a character (a leading "!" or "#", a comma), or
// read otherwise: "**" anywhere but as a whole component (the walker
// reads "**.pem" and "s**/t" as "*.pem" and "s*/t", as gitignore does;
// ugrep does not), and empty components ("//secret", which the walker
// anchors like "/secret" and ugrep matches with nothing).
func ugrepSafeGlob(g string) bool {
	if !rgSafeGlob(g) || strings.HasPrefix(g, "!") || strings.HasPrefix(g, "#") || strings.Contains(g, ",") ||
		strings.Contains(g, "//") {
		return false
	}
	for _, part := range strings.Split(g, "/") {
		if strings.Contains(part, "**") && part != "**" {
			return false
		}
	}
	return true
}

// hasHiddenPart reports whether a slash-separated relative path has a
// component starting with a dot.
func hasHiddenPart(rel string) bool {
	return strings.HasPrefix(rel, ".") || strings.Contains(rel, "/.")
}

// ugrepIgnoredBudget is how many bytes of ignored files ugrep may read for
// nothing before the ordered path answers instead: every match in them is
// held until the end, and real trees hold many (logs, bundles).
const ugrepIgnoredBudget = 1 << 20

// ugrepUnfitItem says why the ordered path must answer instead, given an
// item the walker selected (or reported): a hidden file (ugrep skipped
// it: an ignore file whitelisted it), or a per-path error (ugrep reports
// only those in what it walks into, on its stderr, which hands over
// anyway).
func (p *prepared) ugrepUnfitItem(it item) string {
	switch {
	case !p.e.hidden && hasHiddenPart(it.rel):
		return "a whitelisted hidden name"
	case it.err != "":
		return "a per-path error"
	}
	return ""
}

// ugrepUnfitIgnored says why the ordered path must answer instead, given
// an entry an ignore rule skips, which ugrep reads unless it is hidden and
// hidden is off: a directory (ugrep would search its whole subtree for
// nothing: node_modules), or a file that takes ugrep's reading past the
// budget.
func (p *prepared) ugrepUnfitIgnored(c child, waste *walkWaste) string {
	switch {
	case c.hidden && !p.e.hidden:
	case c.isDir:
		return "an ignored directory"
	case p.e.maxSize > 0 && c.size > p.e.maxSize:
		return wasted(&waste.tooLarge, c.size, walkTooLargeBudget)
	default:
		return wasted(&waste.ignored, c.size, ugrepIgnoredBudget)
	}
	return ""
}

// ugrepWalkArgs builds ugrep's arguments for the walk (never a shell).
// Its working directory is the sandbox root, which anchored globs are
// relative to; paths come out relative to it.
func (p *prepared) ugrepWalkArgs() []string {
	a := []string{"-a", "-u", "-H", "--format=" + ugrepFormat}
	if p.e.fuzzy > 0 {
		a = append(a, "-Z"+strconv.Itoa(p.e.fuzzy))
	}
	if p.fixed {
		a = append(a, "-F")
	}
	if p.e.word {
		a = append(a, "-w")
	}
	flags, root := p.ugrepWalkSelection()
	return append(append(a, flags...), "--regexp="+p.pat, "--", root)
}

// ugrepWalkSelection is the part of ugrep's arguments that selects files:
// ugrep with these flags and -l lists what the ugrep walk searches.
func (p *prepared) ugrepWalkSelection() (flags []string, root string) {
	a := []string{"-r", "-p"}
	if p.e.hidden {
		a = append(a, "--hidden")
	}
	if !p.e.recursive {
		a = append(a, "--depth=1")
	}
	// A glob without a trailing slash prunes directories as well as files
	// (gitignore's rule, and the walker's); --exclude alone would skip
	// only files.
	deny := make([]string, len(p.denyGlobs))
	for i, g := range p.denyGlobs {
		deny[i] = foldGlob(g, false) // deny globs ignore case (compileDeny)
	}
	for _, g := range slices.Concat(deny, p.e.exclude) {
		if dir, ok := strings.CutSuffix(g, "/"); ok {
			a = append(a, "--exclude-dir="+strings.TrimRight(dir, "/"))
		} else {
			a = append(a, "--exclude="+g, "--exclude-dir="+g)
		}
	}
	return a, p.walkRoot()
}
