package audit

import (
	"bytes"
	"testing"
)

// TestChainAgreesWithVerify feeds the same lines to the incremental Chain and
// to Verify, on a clean log and on tampered ones, and expects the same index.
func TestChainAgreesWithVerify(t *testing.T) {
	path := newLog(t, matrixSize)
	orig := mustRead(t, path)
	lines := readLines(t, path)
	variants := map[string][]byte{"clean": orig}
	edited := bytes.Clone(orig)
	edited[len(lines[0])+len(lines[1])+40] ^= 0x01
	variants["edited line 2"] = edited
	variants["deleted line 5"] = bytes.Join(append(append([][]byte{}, lines[:5]...), lines[6:]...), nil)
	variants["duplicated line 9"] = bytes.Join(append(append(append([][]byte{}, lines[:10]...), lines[9]), lines[10:]...), nil)
	swapped := append([][]byte{}, lines...)
	swapped[12], swapped[13] = swapped[13], swapped[12]
	variants["swapped 12,13"] = bytes.Join(swapped, nil)
	variants["garbage line 7"] = bytes.Join(append(append(append([][]byte{}, lines[:7]...), []byte("{}\n")), lines[7:]...), nil)

	for name, data := range variants {
		writeFile(t, path, data)
		rep := mustVerify(t, path)
		c := NewChain()
		var fed []Entry
		for _, l := range bytes.SplitAfter(data, []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			e, ok := c.Feed(bytes.TrimSuffix(l, []byte("\n")))
			if !ok {
				break
			}
			fed = append(fed, e)
		}
		if rep.OK != (c.Bad() == nil) {
			t.Fatalf("%s: Verify %s, Chain bad %+v", name, rep, c.Bad())
		}
		if !rep.OK && rep.Index != c.Bad().Index {
			t.Fatalf("%s: Verify at #%d, Chain at #%d", name, rep.Index, c.Bad().Index)
		}
		if c.Len() != int64(len(fed)) || rep.Entries != c.Len() {
			t.Fatalf("%s: Chain.Len %d, fed %d, Verify entries %d", name, c.Len(), len(fed), rep.Entries)
		}
		if rep.OK && c.Last() != fed[len(fed)-1].Hash {
			t.Fatalf("%s: Last %s", name, c.Last())
		}
		// once broken, the chain stays broken
		if c.Bad() != nil {
			if _, ok := c.Feed(lines[0][:len(lines[0])-1]); ok {
				t.Fatalf("%s: chain accepted a line after breaking", name)
			}
		}
	}
}

// TestChainFollowsAppends: the pane's use — feed lines as they are appended.
func TestChainFollowsAppends(t *testing.T) {
	path := newLog(t, 0)
	l, err := Open(path, stepClock())
	if err != nil {
		t.Fatal(err)
	}
	c := NewChain()
	var off int64
	for i := 0; i < 10; i++ {
		if _, err := l.Append(sampleEntry(i)); err != nil {
			t.Fatal(err)
		}
		got, next, err := ReadRange(path, off, -1)
		if err != nil || len(got) != 1 {
			t.Fatalf("read %d: %v %v", i, got, err)
		}
		data := mustRead(t, path)[off : next-1]
		if _, ok := c.Feed(data); !ok {
			t.Fatalf("feed %d: %+v", i, c.Bad())
		}
		off = next
	}
	if c.Len() != 10 || c.Bad() != nil {
		t.Fatalf("len %d bad %+v", c.Len(), c.Bad())
	}
}
