package search

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The rg walk: for a request whose file selection rg can reproduce
// exactly, rg walks the tree itself, on all cores, instead of being handed
// Vigil's ordered file lists. Vigil's walk, the binary sniff of every file
// and rg's slower explicit-path mode cost 2-3x rg's own time on large
// trees; this path costs about rg's own time plus the final sort.
//
// Why the selection is the same: Vigil's walker follows rg 13's ignore
// rules (.gitignore, .ignore, .rgignore with rg's precedence, the .git
// boundary, whitelisted hidden names), rg is told to read nothing else
// (no global, exclude or parent ignore files, no git repository needed),
// and deny and exclude globs become rg override exclusions, which prune
// like Vigil's. Requests rg cannot reproduce take the ordered path:
// include globs (rg's whitelist overrides beat ignore files), followed
// symlinks (loop errors), exclude globs below the sandbox root, ignore
// files between the sandbox root and the search root, and any deny or
// exclude glob or ignore-file line with syntax beyond "*", "**" and "/"
// (rgSafeGlob; the walker flags such ignore files as it reads them). rg
// reports only files that matched, so the walker's list can only check
// that rg selected no file too many; these rules are what keep it from
// selecting one too few. A message on rg's stderr that Vigil cannot pin
// on a path hands over too.
//
// Output: rg prints only where each match is, and Vigil reads the matched
// files for their lines (rgplain.go says why and how).
//
// Binary files: every file rg matched is read and sniffed afterwards
// exactly as on the ordered path (NUL in the first 8 KiB: binary, dropped
// but counted; over max_file_size_bytes: dropped, counted), so rg's own
// NUL and encoding handling never decides. rg searches every file as text
// (-a), as it does on the ordered path, so a text file with a NUL past the
// sniff window gets the same answer from both. (-a also costs rg less than
// --binary, which turns NUL bytes into line ends: 92 against 105 ms of CPU
// on the selective case over the Go tree.)
//
// Order and truncation: output arrives in any order, so nothing is final
// until rg exits. As soon as more matching lines than max_results have
// arrived, truncation is certain, and the ordered path (which stops early)
// takes over; likewise when the final result would be truncated by context
// lines or when the walk reaches max_files (the ordered walk stops there).
// So the rg walk only ever returns complete, untruncated results, which are
// the same whichever path computes them (a timeout aside: then the matches
// read by the deadline are returned, sorted).

// rgWalkEligible reports whether rg can walk the tree for this request and
// select exactly the files Vigil's walker would.
func (p *prepared) rgWalkEligible() bool {
	// rgSafeGlob: rg may read other globs differently (and "!" would
	// whitelist).
	if p.be.Name != "rg" || !p.walkable(rgSafeGlob) {
		return false
	}
	if p.pl.target != p.pl.sandbox && !p.e.noIgnore {
		// Vigil applies ignore files from the sandbox root down; rg is told
		// to read none above its search root.
		rel := relSlash(p.pl.sandbox, p.pl.target)
		dir := p.pl.sandbox
		for _, part := range strings.Split(rel, "/") {
			for _, n := range ignoreNames {
				if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
					return false
				}
			}
			dir = filepath.Join(dir, part)
		}
	}
	return true
}

func (p *prepared) rgWalkArgs() []string {
	a := slices.Concat([]string{"--no-config", "-a", "-s"}, rgPlainArgs)
	if p.e.maxPerFile > 0 {
		a = append(a, "-m", strconv.Itoa(p.e.maxPerFile))
	}
	if p.fixed {
		a = append(a, "-F")
	}
	if p.e.word {
		a = append(a, "-w")
	}
	flags, root := p.rgWalkSelection()
	return append(append(a, flags...), "--regexp="+p.pat, "--", root)
}

// rgWalkSelection is the part of rg's arguments that selects files: rg
// with these flags and --files over root lists what the rg walk searches.
func (p *prepared) rgWalkSelection() (flags []string, root string) {
	a := []string{"--no-require-git", "--no-ignore-parent", "--no-ignore-global", "--no-ignore-exclude"}
	if p.e.hidden {
		a = append(a, "--hidden")
	}
	if p.e.noIgnore {
		a = append(a, "--no-ignore")
	}
	if !p.e.recursive {
		a = append(a, "--max-depth", "1")
	}
	for _, g := range p.denyGlobs {
		a = append(a, "-g", "!"+foldGlob(g, true)) // deny globs ignore case (compileDeny)
	}
	for _, g := range p.e.exclude {
		a = append(a, "-g", "!"+g)
	}
	return a, p.walkRoot()
}

// ignoreFileWarning reports rg's complaint about a line of an ignore file,
// which Vigil's walker skips silently.
func ignoreFileWarning(l string) bool {
	l = strings.TrimPrefix(l, "rg: ")
	for _, n := range ignoreNames {
		if i := strings.Index(l, n+": line "); i >= 0 && (i == 0 || l[i-1] == '/') {
			return true
		}
	}
	return false
}

// stderrPath reads rg's "./path: message (os error N)" into the path
// relative to the sandbox and Vigil's wording of the message. rg's I/O
// messages hold no ": " of their own, so the path is everything before
// the last one (a name may contain ": ").
func stderrPath(l string) (rel, msg string, ok bool) {
	l = strings.TrimPrefix(l, "rg: ")
	k := strings.LastIndex(l, ": ")
	if !strings.HasPrefix(l, "./") || k < 2 {
		return "", "", false
	}
	msg = strings.TrimSpace(l[k+2:])
	if i := strings.Index(msg, " (os error"); i >= 0 {
		msg = msg[:i]
	}
	return l[2:k], strings.ToLower(strings.TrimSuffix(msg, ".")), true
}

// pinRGStderr reads rg's stderr into per-path errors (a directory it
// could not read, a file it could not open), with the files among them
// (which the walker must have selected too). ok is false for a message
// Vigil cannot pin on a path (or a path with a newline, split across
// lines). orderRel turns a path relative to the sandbox root into one
// relative to the order root.
func (p *prepared) pinRGStderr(stderr string, orderRel func(string) string) (errs []*walkFile, unreadable []string, ok bool) {
	var buf [sniffBytes]byte
	for _, l := range strings.Split(strings.TrimSpace(lossy(stderr)), "\n") {
		if l == "" || ignoreFileWarning(l) {
			continue
		}
		rel, msg, ok := stderrPath(l)
		if !ok {
			return nil, nil, false
		}
		abs := filepath.Join(p.pl.sandbox, rel)
		e := newWalkFile(orderRel(rel))
		if fi, err := os.Lstat(abs); err == nil && fi.IsDir() {
			e.isDir = true
			msg = "cannot read directory: " + dirError(abs, msg)
		} else {
			unreadable = append(unreadable, e.orderRel)
			if v := sniff(abs, 0, buf[:]); v != "" && v != "binary" {
				msg = v
			}
		}
		e.err = &FileError{Path: e.display, Error: msg}
		errs = append(errs, e)
	}
	return errs, unreadable, true
}

// dirError is why a directory cannot be read, in Vigil's words (rg's
// otherwise).
func dirError(abs, rgSaid string) string {
	f, err := os.Open(abs)
	if err != nil {
		return errText(err)
	}
	defer f.Close()
	if _, err := f.ReadDir(1); err != nil {
		return errText(err)
	}
	return rgSaid
}
