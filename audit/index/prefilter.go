package index

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// The prefilter rejects most lines of a large log for a `/` query without
// building their rows: it tests the folded query on the line's bytes in
// place. It is a necessary condition of the full match, never a sufficient
// one: a line it lets through is judged by LineFilter as before.
//
// Why it is sound. A row's filter text (Row.Hay) is its time, actor, event,
// task, target and outcome joined by spaces; a fuzzy match of the query is a
// folded subsequence of it, so the query minus its spaces is a folded
// subsequence of the fields run together (see pattern).
//
// A line the chain has verified is in canonical shape, and its row is the
// valid one. Where its head (everything before "content_hash_before") is
// plain ASCII, the first five fields are byte for byte the head's values, in
// that order, and the outcome is the error code (in the head after the
// target, equal once folded), "ok" or "fail". So the head followed by
// "okfail" holds the fields run together as a subsequence: the query is
// walked over those bytes without finding where any value starts.
//
// An unverified line's row is the valid or the damaged one ("(damaged)" for
// the event, "damaged" for the outcome) only when readHead and tailShaped
// find it in canonical shape; the query is walked over the fields of both.
// TestPrefilterNeverRejectsAKeptRow holds it to the full match.

var (
	// the head ends where this key starts: searched from its 'h', a byte
	// rare in a head past minHeadEnd (unlike the quote), which makes
	// bytes.Index several times faster
	kHashBefore      = []byte(`hash_before":"`)
	kContent         = []byte(`","content_`)
	okFail           = []byte("okfail")
	okText, failText = okFail[:2], okFail[2:]
	damagedEventText = []byte(DamagedEvent)
)

// prefilter is a query folded for the in-place test.
type prefilter struct {
	want []byte // the folded query without its spaces
	// none says no plain line can match (a character of the query folds to
	// no ASCII character); use says the test can reject lines at all
	none, use bool
}

func newPrefilter(query string) prefilter {
	p := newPattern(query)
	if !p.ascii {
		return prefilter{none: true, use: true}
	}
	want := make([]byte, 0, len(p.folded))
	for _, c := range p.folded {
		if c != ' ' {
			want = append(want, c)
		}
	}
	return prefilter{want: want, use: len(want) > 0}
}

// minHeadEnd is where the error code's closing quote is in the shortest
// head in canonical shape (one digit of seq, every value empty, success
// true): the search for the head's end starts past it.
var minHeadEnd = len(kSeq) + 1 + len(kTime) + len(kActor) + len(kEvent) + len(kTask) +
	len(kCapability) + len(kTarget) + len(kJTI) + len(kSuccess) + len(kTrue) + len(kErrorCode)

// rejects says the row of line cannot pass the query: true only when it
// surely cannot; false leaves the line to the full judgement.
func (p prefilter) rejects(line []byte, verified bool) bool {
	if !p.use {
		return false
	}
	if verified {
		return p.rejectsHead(line)
	}
	// which row an unverified line has is known only from its shape: read
	// it, then test the fields of both rows it can have
	h, ok := readHead(line)
	if !ok || !p.none && p.matches(h) {
		return false
	}
	return tailShaped(line, h)
}

// rejectsHead is rejects for a verified line (in canonical shape): the
// query is walked over the line's head, keys and all, with no need to know
// where each value starts; the walk tests that the head is plain too.
func (p prefilter) rejectsHead(line []byte) bool {
	from := minHeadEnd + len(kContent)
	if len(line) < from {
		return false
	}
	end := bytes.Index(line[from:], kHashBefore) + from - len(kContent)
	if end < minHeadEnd || !bytes.HasPrefix(line[end:], kContent) {
		return false
	}
	// through the error code's closing quote: with no backslash before it,
	// every quote is JSON's own, so this is the key's only place in a line
	// in canonical shape
	head := line[:end+1]
	if p.none {
		return plainHead(head) // no plain row can match
	}
	k, plain := walk(p.want, 0, head)
	return k < len(p.want) && plain && walkConst(p.want, k, okFail) < len(p.want)
}

// matches says the query may match the valid or the damaged row of a line
// read by readHead (its fields are plain): a walk over each row's fields.
func (p prefilter) matches(h headFields) bool {
	k := walkConst(p.want, 0, h.time)
	k = walkConst(p.want, k, h.actor) // the rows differ from here on
	valid := walkConst(p.want, k, h.event)
	damaged := walkConst(p.want, k, damagedEventText)
	for _, field := range [][]byte{h.task, h.target} {
		valid = walkConst(p.want, valid, field)
		damaged = walkConst(p.want, damaged, field)
	}
	if walkConst(p.want, damaged, damagedOutcomeB) == len(p.want) {
		return true
	}
	switch {
	case h.success:
		return walkConst(p.want, valid, okText) == len(p.want)
	case len(h.errorCode) > 0:
		return walkConst(p.want, valid, h.errorCode) == len(p.want) // folded as the outcome is
	default:
		return walkConst(p.want, valid, failText) == len(p.want)
	}
}

const ones, highs = 0x0101010101010101, 0x8080808080808080

// walk matches want's bytes, from k on, in order in b (ASCII case folded:
// want is lower case; greedy matching finds a subsequence whenever there is
// one) and returns how many are matched, plus k. When that is not all of
// them, the searches have read all of b, and plain says whether b is plain
// (see plainHead): the walk and that test are one pass.
func walk(want []byte, k int, b []byte) (int, bool) {
	if k == len(want) {
		return k, true
	}
	fold, pat := folding(want[k])
	var bad uint64
	// eight bytes at a time, each word read once: the searches for the next
	// bytes of want go on in the word of the last match
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i : i+8])
		bad |= notPlain(x)
		for above := ^uint64(0); ; {
			m := exactZeroBytes((x|fold)^pat) & above
			if m == 0 {
				break
			}
			if k++; k == len(want) {
				return k, bad == 0
			}
			fold, pat = folding(want[k])
			above = ^(m ^ (m - 1)) // the bytes after the match
		}
	}
	rest := b[i:]
	for _, ch := range rest {
		if ch < 0x20 || ch > 0x7e || ch == '\\' {
			bad = highs
		}
		if ch|byte(fold) == byte(pat) {
			if k++; k == len(want) {
				break
			}
			fold, pat = folding(want[k])
		}
	}
	return k, bad == 0
}

// exactZeroBytes has the high bit set of every zero byte of y, and only
// those (unlike zeroBytes, whose borrow can flag a byte above a zero one).
func exactZeroBytes(y uint64) uint64 {
	const lows = 0x7f7f7f7f7f7f7f7f
	return ^((y&lows + lows) | y | lows)
}

// walkConst is walk over short text known to be plain: a byte at a time,
// faster than eight at a time over a row's short fields.
func walkConst(want []byte, k int, b []byte) int {
	if k == len(want) {
		return k
	}
	w := want[k]
	for _, ch := range b {
		if lowerASCII[ch] == w {
			if k++; k == len(want) {
				return k
			}
			w = want[k]
		}
	}
	return k
}

// lowerASCII folds ASCII upper case to lower case, byte for byte: a table
// is a load where the comparisons are two branches.
var lowerASCII = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] += 'a' - 'A'
		}
	}
	return t
}()

// folding is what walk and indexFolded or into every byte (0x20 when c is a
// lower-case letter: b|0x20 is that letter only for its two cases) and then
// compares it with (c in every byte).
func folding(c byte) (fold, pat uint64) {
	if 'a' <= c && c <= 'z' {
		fold = 0x20 * ones
	}
	return fold, uint64(c) * ones
}

// zeroBytes has the high bit set of the first zero byte of y (and maybe of
// bytes above it, never below): its lowest set bit finds the first.
func zeroBytes(y uint64) uint64 {
	return (y - ones) &^ y & highs
}

// notPlain has the high bit of each byte of x that is not plain set, and
// maybe others above the lowest such byte: exact for whether there is one.
// A byte ≥ 0x80 sets its own high bit; with none, a byte < 0x20 is the
// lowest to borrow in x-0x20…, 0x7f the only one to carry in x+1…, and a
// backslash the lowest zero byte of x^0x5c….
func notPlain(x uint64) uint64 {
	y := x ^ '\\'*ones
	return (x | (x - 0x20*ones) | (x + ones) | ((y - ones) &^ y)) & highs
}

// indexFolded is the index of the first byte of b equal to c, or to its
// upper case when c is a lower-case letter; -1 if none. Written by hand for
// the case folding bytes.IndexByte lacks, and faster than it over the few
// bytes between two matches: eight bytes at a time.
func indexFolded(b []byte, c byte) int {
	fold, pat := folding(c)
	for rest := b; len(rest) >= 8; rest = rest[8:] {
		if m := zeroBytes((binary.LittleEndian.Uint64(rest) | fold) ^ pat); m != 0 {
			return len(b) - len(rest) + bits.TrailingZeros64(m)/8
		}
	}
	for i := len(b) &^ 7; i < len(b); i++ {
		if b[i]|byte(fold) == c {
			return i
		}
	}
	return -1
}

// plainHead says b holds only printable ASCII and no backslash: no escapes,
// so its JSON string values are byte for byte their decoded, shown text.
// Written by hand because the standard library has no such scan: eight
// bytes at a time.
func plainHead(b []byte) bool {
	var bad uint64
	rest := b
	for ; len(rest) >= 8; rest = rest[8:] {
		bad |= notPlain(binary.LittleEndian.Uint64(rest))
	}
	return bad == 0 && plain(rest)
}
