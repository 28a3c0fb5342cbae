package audit

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// damaged asserts err is a *DamagedError at index.
func damaged(t *testing.T, err error, index int64) *DamagedError {
	t.Helper()
	var de *DamagedError
	if !errors.As(err, &de) {
		t.Fatalf("want a *DamagedError at #%d, got %v", index, err)
	}
	if de.Index != index {
		t.Fatalf("damage at #%d, want #%d: %v", de.Index, index, de)
	}
	if !strings.Contains(de.Error(), "vigil audit verify") || !strings.Contains(de.Error(), "vigil audit seal") {
		t.Fatalf("the message names no way out: %v", de)
	}
	return de
}

func openLog(t *testing.T, path string) *Log {
	t.Helper()
	l, err := Open(path, stepClock())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestAppendRefusesCutEnd: the attack. Deleting the last entries is
// no longer buried by the next write: Append writes nothing and says where.
func TestAppendRefusesCutEnd(t *testing.T) {
	path := newLog(t, 10)
	lines := readLines(t, path)
	cut := bytes.Join(lines[:7], nil)
	writeFile(t, path, cut)
	l := openLog(t, path)
	_, err := l.Append(sampleEntry(10))
	de := damaged(t, err, 7)
	if !strings.Contains(de.Reason, "shrank") {
		t.Fatalf("reason: %s", de.Reason)
	}
	if got := mustRead(t, path); !bytes.Equal(got, cut) {
		t.Fatal("a refused append changed the log")
	}
	// and it keeps refusing
	if _, err := l.Append(sampleEntry(10)); err == nil {
		t.Fatal("the second append went through")
	}
	if rep := mustVerify(t, path); rep.OK || rep.Reason != ReasonDeleted {
		t.Fatalf("verify after a refused append: %s", rep)
	}
}

// TestAppendRefusesAlteredEnd: an edited last entry, the last entry replaced
// by another valid one of the same length, and garbage after the end.
func TestAppendRefusesAlteredEnd(t *testing.T) {
	t.Run("edited last entry", func(t *testing.T) {
		path := newLog(t, 6)
		raw := mustRead(t, path)
		i := bytes.LastIndex(raw, []byte(`"target":"living-room"`))
		writeFile(t, path, append(append(bytes.Clone(raw[:i]), `"target":"living-ROOM"`...), raw[i+len(`"target":"living-room"`):]...))
		_, err := openLog(t, path).Append(sampleEntry(6))
		damaged(t, err, 5)
	})
	t.Run("last entry rewritten with its hash", func(t *testing.T) {
		path := newLog(t, 6)
		rewriteFrom(t, path, 5, func(e *Entry) { e.Target = "living-ROOM" }, false)
		_, err := openLog(t, path).Append(sampleEntry(6))
		damaged(t, err, 5)
	})
	t.Run("a valid entry appended by hand", func(t *testing.T) {
		path := newLog(t, 6)
		other := newLog(t, 7)
		rewriteFrom(t, other, 0, func(e *Entry) { e.Actor = "someone" }, true) // its #6 does not chain onto this log
		lines := readLines(t, other)
		f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		f.Write(lines[6])
		f.Close()
		_, err := openLog(t, path).Append(sampleEntry(7))
		damaged(t, err, 6)
	})
	t.Run("log missing, head there", func(t *testing.T) {
		path := newLog(t, 3)
		os.Remove(path)
		_, err := openLog(t, path).Append(sampleEntry(0))
		damaged(t, err, 0)
	})
	t.Run("head deleted", func(t *testing.T) {
		path := newLog(t, 5)
		writeFile(t, path, bytes.Join(readLines(t, path)[:3], nil))
		os.Remove(HeadPath(path))
		_, err := openLog(t, path).Append(sampleEntry(3))
		damaged(t, err, 3)
		// verify agrees with the refusal
		if rep := mustVerify(t, path); rep.OK || rep.Index != 3 || rep.Reason != ReasonDeleted || !strings.Contains(rep.Detail, "missing") {
			t.Fatalf("verify: %s", rep)
		}
	})
	t.Run("head garbage", func(t *testing.T) {
		path := newLog(t, 5)
		writeFile(t, HeadPath(path), []byte("{oops"))
		_, err := openLog(t, path).Append(sampleEntry(5))
		damaged(t, err, 5)
		if rep := mustVerify(t, path); rep.OK || rep.Index != 5 {
			t.Fatalf("verify: %s", rep)
		}
	})
}

// TestAppendAfterPowerCut: the head is moved without fsync, so a power cut
// can leave it one append behind, or empty. Neither bricks the log.
func TestAppendAfterPowerCut(t *testing.T) {
	t.Run("head one behind", func(t *testing.T) {
		path := newLog(t, 4)
		old := mustRead(t, HeadPath(path))
		l := openLog(t, path)
		if _, err := l.Append(sampleEntry(4)); err != nil {
			t.Fatal(err)
		}
		writeFile(t, HeadPath(path), old) // the rename never reached the disk
		if _, err := l.Append(sampleEntry(5)); err != nil {
			t.Fatalf("append after a lagging head: %v", err)
		}
		if rep := mustVerify(t, path); !rep.OK || rep.Entries != 6 {
			t.Fatalf("verify: %s", rep)
		}
	})
	t.Run("head empty", func(t *testing.T) {
		path := newLog(t, 4)
		writeFile(t, HeadPath(path), nil)
		if _, err := openLog(t, path).Append(sampleEntry(4)); err != nil {
			t.Fatalf("append after an empty head: %v", err)
		}
	})
	t.Run("first append, no head yet", func(t *testing.T) {
		path := newLog(t, 1)
		os.Remove(HeadPath(path))
		if _, err := openLog(t, path).Append(sampleEntry(1)); err != nil {
			t.Fatalf("append after a lost first head: %v", err)
		}
	})
	t.Run("lagging head but the entry after it was edited", func(t *testing.T) {
		path := newLog(t, 4)
		old := mustRead(t, HeadPath(path))
		l := openLog(t, path)
		l.Append(sampleEntry(4))
		writeFile(t, HeadPath(path), old)
		raw := mustRead(t, path)
		i := bytes.LastIndex(raw, []byte(`"living-room"`))
		raw[i+1] = 'L'
		writeFile(t, path, raw)
		_, err := l.Append(sampleEntry(5))
		damaged(t, err, 4)
	})
}

// TestAppendLegacyHead: heads written before they recorded the log's size
// still anchor the end, and the next head has a size.
func TestAppendLegacyHead(t *testing.T) {
	path := newLog(t, 5)
	lines := readLines(t, path)
	var last Entry
	json.Unmarshal(lines[4], &last)
	legacy, _ := json.Marshal(map[string]any{"seq": 3, "hash": mustEntry(t, lines[3]).Hash}) // one behind too
	writeFile(t, HeadPath(path), legacy)
	l := openLog(t, path)
	if _, err := l.Append(sampleEntry(5)); err != nil {
		t.Fatalf("append on a legacy head: %v", err)
	}
	h, hs := loadHead(path)
	if st, _ := os.Stat(path); hs != headOK || h.Seq != 5 || h.Size != st.Size() {
		t.Fatalf("head after append: %+v (%v)", h, hs)
	}
	// a legacy head ahead of the log
	writeFile(t, HeadPath(path), []byte(`{"seq":9,"hash":"00"}`))
	_, err := l.Append(sampleEntry(6))
	damaged(t, err, 6)
}

func mustEntry(t *testing.T, line []byte) Entry {
	t.Helper()
	e, err := parseLine(bytes.TrimSuffix(line, []byte("\n")))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// rewriteFrom is the careful attacker: it edits entry i, re-hashes the chain
// from there and, with moveHead, rewrites the head to match.
func rewriteFrom(t *testing.T, path string, i int, edit func(*Entry), moveHead bool) {
	t.Helper()
	lines := readLines(t, path)
	var out []byte
	prev := Genesis
	var last Entry
	for j, ln := range lines {
		e := mustEntry(t, ln)
		if j >= i {
			if j == i {
				edit(&e)
			}
			e.Prev = prev
			e.Hash, _ = e.ComputeHash()
		}
		b, _ := e.Line()
		out = append(append(out, b...), '\n')
		prev, last = e.Hash, e
	}
	writeFile(t, path, out)
	if moveHead {
		hb, _ := json.Marshal(head{Seq: last.Seq, Hash: last.Hash, Size: int64(len(out))})
		writeFile(t, HeadPath(path), hb)
	}
}

// testKey writes an operator key where Open looks for it (keys/ beside the
// log) and returns it.
func testKey(t *testing.T, logPath string) ed25519.PrivateKey {
	t.Helper()
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	dir := filepath.Join(filepath.Dir(logPath), "keys")
	os.MkdirAll(dir, 0o700)
	writeFile(t, filepath.Join(dir, "operator.key.pem"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	return key
}

func otherKey() ed25519.PrivateKey {
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	return key
}

// TestSealCutEnd: seal is the one way on. It records the expected and the
// found end in a signed entry; Verify then passes and names the sealed gap
// (with the signature checked when the public key is given); appends go on.
func TestSealCutEnd(t *testing.T) {
	path := newLog(t, 10)
	whole := readLines(t, path)
	writeFile(t, path, bytes.Join(whole[:7], nil))
	l := openLog(t, path)
	key := otherKey()
	e, err := l.Seal("operator:ada", "power cut; entries 7-9 lost", key)
	if err != nil {
		t.Fatal(err)
	}
	if e.Seq != 7 || e.Event != EventSealed || e.Prev != mustEntry(t, whole[6]).Hash {
		t.Fatalf("seal entry: %+v", e)
	}
	var d SealDetails
	json.Unmarshal(e.Details, &d)
	if d.Expected == nil || d.Expected.Seq != 9 || d.Expected.Hash != mustEntry(t, whole[9]).Hash ||
		d.Found == nil || d.Found.Seq != 6 || d.Reason != "power cut; entries 7-9 lost" || d.Signature == nil {
		t.Fatalf("seal details: %s", e.Details)
	}
	rep := mustVerify(t, path)
	if !rep.OK || rep.Entries != 8 || len(rep.Sealed) != 1 {
		t.Fatalf("verify after seal: %s", rep)
	}
	g := rep.Sealed[0]
	if g.Index != 7 || g.Expected != 10 || g.Found != 7 || g.Signed != "unchecked" {
		t.Fatalf("gap: %+v", g)
	}
	if !strings.Contains(rep.String(), "sealed gap at #7: expected 10 entries, found 7") {
		t.Fatalf("human report: %s", rep)
	}
	if js := mustJSON(t, rep); !strings.Contains(js, `"sealed":[{"index":7,"expected_entries":10,"found_entries":7`) {
		t.Fatalf("JSON report: %s", js)
	}
	rep, _ = VerifyWith(path, VerifyOptions{Key: key.Public().(ed25519.PublicKey)})
	if !rep.OK || rep.Sealed[0].Signed != "verified" {
		t.Fatalf("verify with the key: %s", rep)
	}
	rep, _ = VerifyWith(path, VerifyOptions{Key: otherKey().Public().(ed25519.PublicKey)})
	if rep.OK || rep.Index != 7 || rep.Reason != ReasonBadSignature {
		t.Fatalf("a seal checked against another key: %s", rep)
	}
	if _, err := l.Append(sampleEntry(8)); err != nil {
		t.Fatalf("append after seal: %v", err)
	}
	if _, err := l.Seal("operator:ada", "again", key); !errors.Is(err, ErrNothingToSeal) {
		t.Fatalf("sealing an intact log: %v", err)
	}
}

// TestSealForgedOrMoved: a seal whose signature does not cover its details,
// or that does not name the entry it follows, fails verification.
func TestSealForgedOrMoved(t *testing.T) {
	path := newLog(t, 5)
	writeFile(t, path, bytes.Join(readLines(t, path)[:3], nil))
	key := otherKey()
	if _, err := openLog(t, path).Seal("op", "cut", key); err != nil {
		t.Fatal(err)
	}
	pub := key.Public().(ed25519.PublicKey)
	// change the reason and re-hash: the chain holds, the signature does not
	rewriteFrom(t, path, 3, func(e *Entry) {
		e.Details = bytes.Replace(e.Details, []byte(`"reason":"cut"`), []byte(`"reason":"cat"`), 1)
	}, true)
	if rep, _ := VerifyWith(path, VerifyOptions{Key: pub}); rep.OK || rep.Reason != ReasonBadSignature || rep.Index != 3 {
		t.Fatalf("forged seal: %s", rep)
	}
}

// TestSealBrokenChain: damage inside the file (an edited entry) is moved
// aside, never deleted, and the seal chains onto the last good entry.
func TestSealBrokenChain(t *testing.T) {
	path := newLog(t, 8)
	raw := mustRead(t, path)
	lines := readLines(t, path)
	edited := bytes.Replace(lines[5], []byte(`"living-room"`), []byte(`"LIVING-room"`), 1)
	tampered := bytes.Join(append(append(append([][]byte{}, lines[:5]...), edited), lines[6:]...), nil)
	writeFile(t, path, tampered)
	e, err := openLog(t, path).Seal("op", "someone edited #5", otherKey())
	if err != nil {
		t.Fatal(err)
	}
	var d SealDetails
	json.Unmarshal(e.Details, &d)
	if e.Seq != 5 || d.MovedTo == "" || d.Bytes != int64(len(tampered)-len(bytes.Join(lines[:5], nil))) || !strings.Contains(d.Broken, "#5") {
		t.Fatalf("seal: %+v %s", e, e.Details)
	}
	aside := mustRead(t, filepath.Join(filepath.Dir(path), d.MovedTo))
	if !bytes.Equal(aside, tampered[len(tampered)-int(d.Bytes):]) {
		t.Fatal("the lines moved aside are not the damaged ones")
	}
	if rep := mustVerify(t, path); !rep.OK || rep.Entries != 6 || len(rep.Sealed) != 1 {
		t.Fatalf("verify: %s", rep)
	}
	_ = raw
}
