package search

// Cases from a review of the shared-slab rg walk (recStore,
// appendWalkEvents), the pooled reads of matched files (readRegularInto,
// decodeLikeBackend) and their callers: fixed findings and guards.

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/internal/testbin"
)

// Guard. Slabs filling while a file owns their tails: a file with
// 20,000 matching lines (past slabLines), a line with 40,000 matches (past
// slabSpans), a 1 MiB line (past slabText), and 50 files with invalid
// UTF-8; past bigMatches events, so runtime.GC() and the parallel fill run.
// The rg walk, ordered rg and ordered ugrep give the same JSON.
func TestSlabBoundariesAgree(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", strings.Repeat("x foo\n", 20000))
	write(t, root, "b.txt", "y\n"+strings.Repeat("foo ", 40000)+"\nfoo\n")
	write(t, root, "c.txt", strings.Repeat("z", 1<<20)+"foo\n"+strings.Repeat("foo\n", 100))
	for i := range 50 {
		write(t, root, fmt.Sprintf("m/%02d.txt", i), strings.Repeat(fmt.Sprintf("foo %d\xff\n", i), 500))
	}
	r, answered := runBoth(t, root, `{"pattern":"foo","max_results":1000000}`)
	if !answered || r.Count < bigMatches {
		t.Errorf("rg walk answered %v with %d events; the slab and GC paths were not exercised", answered, r.Count)
	}
}

// u16 encodes s as UTF-16 with a byte-order mark.
func u16(s string, bigEndian bool) string {
	b := []byte{0xff, 0xfe}
	if bigEndian {
		b = []byte{0xfe, 0xff}
	}
	for _, r := range s {
		units := []uint16{uint16(r)}
		if r >= 0x10000 {
			r -= 0x10000
			units = []uint16{uint16(0xd800 + r>>10), uint16(0xdc00 + r&0x3ff)}
		}
		for _, u := range units {
			if bigEndian {
				b = append(b, byte(u>>8), byte(u))
			} else {
				b = append(b, byte(u), byte(u>>8))
			}
		}
	}
	return string(b)
}

// Guard. UTF-16 files with several lines are text only when
// their first NUL byte lies past the sniff window: ugrep's offsets moved
// onto Vigil's text (lone surrogate after the window, surrogate pair,
// CRLF), context lines and the max_results cut agree with rg and the rg
// walk.
func TestUTF16LateNewlinesAgree(t *testing.T) {
	root := t.TempDir()
	head := strings.Repeat("中", 4500)
	write(t, root, "le.txt", u16(head+"\nfoo\r\n\n中 bar foo\nx𝄞foo\n", false))
	write(t, root, "be.txt", u16(head+"\nfoo\nzz\nfoo 中\n", true))
	write(t, root, "bad.txt", u16(head+"\nfoo\n", false)+"\x34\xdc\x66\x00\x6f\x00\x6f\x00\x0a\x00\x66\x00\x6f\x00\x6f\x00")
	for _, req := range []string{`{"pattern":"foo"}`, `{"pattern":"foo","context":1}`, `{"pattern":"foo|中 bar","context":2,"max_results":4}`, `{"pattern":"o"}`, `{"pattern":"^"}`} {
		expectAgree(t, root, req)
	}
}

// Guard. File names ugrep's %h leaves raw or escapes (CR,
// control bytes, invalid UTF-8, a trailing backslash, a backslash before
// a newline, a name holding a whole fake record after a newline) go
// through endsInString and agree with rg and the rg walk.
func TestOddNamesAgree(t *testing.T) {
	root := t.TempDir()
	for _, n := range []string{"cr\rname", "ctl\x01x", "del\x7f", "bad\xffname", "bs\\", "bs\\\nnl", "q\"", "nl\n{\"f\":\"./y\",\"n\":1,\"b\":0,\"d\":1}", "ünï", "a:1:b", "trail ", "-e"} {
		write(t, root, n, "foo\n")
	}
	write(t, root, "y", "zzz\n")
	for _, req := range []string{`{"pattern":"foo"}`, `{"pattern":"foo","context":1}`, `{"pattern":"o","max_results":3}`} {
		expectAgree(t, root, req)
	}
}

// Guard. Randomised trees (1-6 files, or 30-110 so that several
// chunks and the statEach parallel branch run; CR, CRLF, BOMs, invalid
// UTF-8, late NULs, UTF-16 and truncated-BOM files) with random context,
// max_results, max_matches_per_file, case folding and
// max_file_size_bytes: ordered rg, ordered ugrep and the rg walk give the
// same JSON. (1,500 seeds were run during the review; 60 here.)
func TestRandomTreesAgree(t *testing.T) {
	testbin.FullRunOnly(t, "a randomized comparison of many trees")
	vocab := []string{"foo", "foo bar", "", "x", "é foo", "a\xffb foo", "foofoo", "bar", "FOO", "fo", "  foo  ", "\tfoo", strings.Repeat("ab", 40) + "foo"}
	ends := []string{"\n", "\n", "\n", "\r\n", "\r"}
	odd := []string{"", "\ufeff", "\xff\xfe\x2d\x4e\n\x00", "\xff\xfe\x2d\x4e\x0a\x00\x66\x00", "\xef\xbb", "\r", "\n\n\n", "\xff\xfe\x00\xd8\x2d\x4e"}
	pats := []string{`中`, `中|foo`, `foo`, `o`, `fo+`, `^foo`, `[a-z]+`, `\w+`, `bar|foo`, `foo\b`}
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 99))
		root := t.TempDir()
		nf := 1 + r.IntN(6)
		if r.IntN(2) == 0 {
			nf = 30 + r.IntN(80)
		}
		for i := range nf {
			var b strings.Builder
			if r.IntN(8) == 0 {
				b.WriteString("\ufeff")
			}
			for range r.IntN(12) {
				b.WriteString(vocab[r.IntN(len(vocab))])
				b.WriteString(ends[r.IntN(len(ends))])
			}
			if r.IntN(4) == 0 {
				b.WriteString(vocab[r.IntN(len(vocab))])
			}
			if r.IntN(12) == 0 {
				b.WriteString("\x00foo\n")
			}
			content := b.String()
			if r.IntN(10) == 0 {
				content = odd[r.IntN(len(odd))]
			}
			write(t, root, fmt.Sprintf("d%d/f%d.txt", r.IntN(3), i), content)
		}
		req := fmt.Sprintf(`{"pattern":%q`, pats[r.IntN(len(pats))])
		if r.IntN(2) == 0 {
			req += fmt.Sprintf(`,"context":%d`, r.IntN(3))
		}
		if r.IntN(2) == 0 {
			req += fmt.Sprintf(`,"max_results":%d`, 1+r.IntN(15))
		}
		if r.IntN(3) == 0 {
			req += fmt.Sprintf(`,"max_matches_per_file":%d`, 1+r.IntN(3))
		}
		if r.IntN(4) == 0 {
			req += `,"case":"insensitive"`
		}
		if r.IntN(6) == 0 {
			req += fmt.Sprintf(`,"max_file_size_bytes":%d`, 1+r.IntN(200))
		}
		req += "}"
		walk, answered, ordered := agreeCompare(t, root, req)
		if ordered["rg"] != ordered["ugrep"] {
			t.Errorf("seed %d %s: ordered paths disagree (rg -, ugrep +):\n%s", seed, req, lineDiff(ordered["rg"], ordered["ugrep"]))
		}
		if answered && walk != ordered["rg"] {
			t.Errorf("seed %d %s: rg walk differs (walk -, ordered +):\n%s", seed, req, lineDiff(walk, ordered["rg"]))
		}
	}
}
