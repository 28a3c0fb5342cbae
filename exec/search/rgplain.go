package search

import (
	"bytes"
	"strconv"
)

// The rg walk's output format. rg's --json costs about a third more of
// rg's CPU than plain output and four times the bytes (each match line
// carries its text, escaped, plus path and offset objects), and the rg
// walk is CPU-bound: both processes share the cores. So the walk asks rg
// only where each match is, as the ugrep format does, and reads the lines
// from the files itself (it opens every matched file anyway, to sniff it):
//
//	--null --no-heading --with-filename --only-matching --byte-offset --line-number
//
// gives one line per match, "PATH\0LINE:OFFSET:MATCH\n": the path ends at
// the first NUL (paths have none), OFFSET is the match's byte offset in
// the file and MATCH its bytes, which hold no line end (rg never matches
// one without --multiline), so the match ends at the line's end. One
// other kind of line appears: after a blank line, the --stats block, which
// says rg finished its walk (with -a, rg prints no binary-file notices). A path
// with a line end in it would make the lines ambiguous, so the rg walk
// hands such trees to the ordered path (walkTally.newline).

// rgPlainArgs are the output flags of the rg walk (see above).
var rgPlainArgs = []string{"--null", "--no-heading", "--with-filename", "--only-matching",
	"--byte-offset", "--line-number", "--color", "never", "--stats"}

// parseRGPlainMatch parses one match line of the rg walk's output into a
// record like ugrep's: no text, and one span holding the match's absolute
// byte range in the file, which resolveLines turns into the line's text
// and line-relative offsets. ok is false for a line with no NUL (not a
// match line); err is set for a match line that does not parse.
func parseRGPlainMatch(line []byte, pb *parseBuf) (rec record, ok bool, err error) {
	nul := bytes.IndexByte(line, 0)
	if nul < 0 {
		return record{}, false, nil
	}
	rest := line[nul+1:]
	lineNo, rest, ok1 := leadingUint(rest)
	off, rest, ok2 := leadingUint(rest)
	// Offsets beyond any file Vigil would read are malformed (the size cap
	// is far below), which also keeps the int conversions safe.
	const maxOffset = 1 << 50
	if !ok1 || !ok2 || lineNo == 0 || off > maxOffset || len(rest) > maxOffset {
		return record{}, true, errSyntax
	}
	sp := span{int(off), int(off) + len(rest)}
	if pb != nil {
		rec.spans = append(pb.spans[:0], sp)
		pb.spans = rec.spans
	} else {
		rec.spans = []span{sp}
	}
	rec.path, rec.line = line[:nul], lineNo
	return rec, true, nil
}

// leadingUint reads "DIGITS:" at the start of b.
func leadingUint(b []byte) (n uint64, rest []byte, ok bool) {
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if i == 18 {
			return 0, nil, false // no offset or line number is that long
		}
		n = n*10 + uint64(b[i]-'0')
	}
	if i == 0 || i >= len(b) || b[i] != ':' {
		return 0, nil, false
	}
	return n, b[i+1:], true
}

// parseRGFilesSearched reads the --stats line "N files searched".
func parseRGFilesSearched(line []byte) (int64, bool) {
	digits, found := bytes.CutSuffix(line, []byte(" files searched"))
	if !found || len(digits) == 0 || digits[0] == '+' {
		return 0, false
	}
	n, err := strconv.ParseInt(string(digits), 10, 64)
	return n, err == nil && n >= 0
}
