package audit

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

// checkpointOf signs a checkpoint of the log as it is now.
func checkpointOf(t *testing.T, path string, key ed25519.PrivateKey) []byte {
	t.Helper()
	rep := mustVerify(t, path)
	if !rep.OK {
		t.Fatalf("checkpoint of a broken log: %s", rep)
	}
	msg, err := SignCheckpoint(Checkpoint{Origin: Origin(rep.First), Size: rep.Entries, Hash: rep.Last}, key)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

func verifyAgainst(t *testing.T, path string, pub ed25519.PublicKey, notes ...[]byte) Report {
	t.Helper()
	var cps []Checkpoint
	for i, n := range notes {
		got, err := ParseCheckpoints("cp"+string(rune('A'+i)), n, pub)
		if err != nil {
			t.Fatal(err)
		}
		cps = append(cps, got...)
	}
	rep, err := VerifyWith(path, VerifyOptions{Checkpoints: cps})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestCheckpointNote: the note is a C2SP checkpoint that Go's own
// sumdb/note opens with the operator's public key.
func TestCheckpointNote(t *testing.T) {
	path := newLog(t, 3)
	key := otherKey()
	msg := checkpointOf(t, path, key)
	lines := strings.Split(string(msg), "\n")
	first := mustEntry(t, readLines(t, path)[0])
	if lines[0] != "vigil-audit/"+first.Hash[:16] || lines[1] != "3" || len(lines[2]) != 44 || lines[3] != "" ||
		!strings.HasPrefix(lines[4], "— vigil-audit/"+first.Hash[:16]+" ") {
		t.Fatalf("note:\n%s", msg)
	}
	vkey, _ := note.NewEd25519VerifierKey(lines[0], key.Public().(ed25519.PublicKey))
	v, _ := note.NewVerifier(vkey)
	if _, err := note.Open(msg, note.VerifierList(v)); err != nil {
		t.Fatalf("sumdb/note cannot open it: %v", err)
	}
}

// TestCheckpointCatches: every way the issue names of making the log a
// non-extension of a checkpoint kept elsewhere fails, with the reason.
func TestCheckpointCatches(t *testing.T) {
	key := otherKey()
	pub := key.Public().(ed25519.PublicKey)
	setup := func(t *testing.T) (string, []byte) {
		path := newLog(t, 10)
		return path, checkpointOf(t, path, key)
	}
	t.Run("extension passes", func(t *testing.T) {
		path, cp := setup(t)
		l := openLog(t, path)
		l.Append(sampleEntry(10))
		older := checkpointOf(t, path, key)
		l.Append(sampleEntry(11))
		rep := verifyAgainst(t, path, pub, cp, older)
		if !rep.OK || rep.Checkpoints != 2 || !strings.Contains(rep.String(), "extends 2 checkpoints") {
			t.Fatalf("%s", rep)
		}
	})
	t.Run("truncation with the head moved too", func(t *testing.T) {
		path, cp := setup(t)
		writeFile(t, path, bytes.Join(readLines(t, path)[:6], nil))
		rewriteFrom(t, path, 5, func(*Entry) {}, true) // head made to match: verify alone passes
		if rep := mustVerify(t, path); !rep.OK {
			t.Fatalf("setup: %s", rep)
		}
		rep := verifyAgainst(t, path, pub, cp)
		if rep.OK || rep.Reason != ReasonTruncated || rep.Index != 6 || rep.Checkpoint != "cpA" || !strings.Contains(rep.Detail, "covers 10") {
			t.Fatalf("%s", rep)
		}
	})
	t.Run("rollback to an older valid copy", func(t *testing.T) {
		path := newLog(t, 5)
		oldLog, oldHead := mustRead(t, path), mustRead(t, HeadPath(path))
		l := openLog(t, path)
		for i := 5; i < 9; i++ {
			l.Append(sampleEntry(i))
		}
		cp := checkpointOf(t, path, key)
		writeFile(t, path, oldLog)
		writeFile(t, HeadPath(path), oldHead)
		if rep := mustVerify(t, path); !rep.OK {
			t.Fatalf("setup: %s", rep)
		}
		if rep := verifyAgainst(t, path, pub, cp); rep.OK || rep.Reason != ReasonTruncated || rep.Index != 5 {
			t.Fatalf("%s", rep)
		}
	})
	t.Run("replaced by a fresh, longer chain", func(t *testing.T) {
		path, cp := setup(t)
		fresh := newLog(t, 12)
		rewriteFrom(t, fresh, 0, func(e *Entry) { e.Actor = "mallory" }, true)
		writeFile(t, path, mustRead(t, fresh))
		writeFile(t, HeadPath(path), mustRead(t, HeadPath(fresh)))
		if rep := verifyAgainst(t, path, pub, cp); rep.OK || rep.Reason != ReasonReplaced || rep.Index != 0 {
			t.Fatalf("%s", rep)
		}
	})
	t.Run("edit before the checkpoint, chain and head re-made", func(t *testing.T) {
		path, cp := setup(t)
		rewriteFrom(t, path, 3, func(e *Entry) { e.Target = "garage" }, true)
		if rep := mustVerify(t, path); !rep.OK {
			t.Fatalf("setup: %s", rep)
		}
		if rep := verifyAgainst(t, path, pub, cp); rep.OK || rep.Reason != ReasonEdited || rep.Index != 9 || !strings.Contains(rep.Detail, "rewritten") {
			t.Fatalf("%s", rep)
		}
	})
	t.Run("cut and sealed below the checkpoint", func(t *testing.T) {
		path, cp := setup(t)
		writeFile(t, path, bytes.Join(readLines(t, path)[:4], nil))
		l := openLog(t, path)
		if _, err := l.Seal("op", "hide it", key); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 8; i++ {
			l.Append(sampleEntry(20 + i))
		}
		rep := verifyAgainst(t, path, pub, cp)
		if rep.OK || rep.Reason != ReasonEdited || !strings.Contains(rep.Detail, "seal at #4") {
			t.Fatalf("%s", rep)
		}
	})
	t.Run("signed by another key", func(t *testing.T) {
		path, _ := setup(t)
		cp := checkpointOf(t, path, otherKey())
		_, err := ParseCheckpoints("cp", cp, pub)
		var ce *CheckpointError
		if !errors.As(err, &ce) || ce.Reason != ReasonBadSignature || !strings.Contains(ce.Detail, "another key") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("text altered", func(t *testing.T) {
		path, cp := setup(t)
		_ = path
		altered := bytes.Replace(cp, []byte("\n10\n"), []byte("\n9\n"), 1)
		_, err := ParseCheckpoints("cp", altered, pub)
		var ce *CheckpointError
		if !errors.As(err, &ce) || ce.Reason != ReasonBadSignature {
			t.Fatalf("%v", err)
		}
	})
	t.Run("not a checkpoint", func(t *testing.T) {
		_, err := ParseCheckpoints("cp", []byte("hello\n"), pub)
		var ce *CheckpointError
		if err == nil || errors.As(err, &ce) {
			t.Fatalf("%v", err)
		}
	})
}

// TestAutoCheckpoints: with the operator key beside the log, decisions and
// every CheckpointEvery-th entry write a signed checkpoint to
// audit.checkpoints, which the log then extends; without a key, none, and a
// checkpoint that cannot be written never fails the append.
func TestAutoCheckpoints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l := openLog(t, path)
	l.Append(Entry{Actor: "a", Event: EventApproved})
	if _, err := os.Stat(CheckpointsPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a checkpoint without a key")
	}
	key := testKey(t, path)
	for _, ev := range []string{EventSubmitted, EventApproved, EventExecuted, EventDenied} {
		if _, err := l.Append(Entry{Actor: "a", Event: ev}); err != nil {
			t.Fatal(err)
		}
	}
	if filepath.Base(CheckpointsPath(path)) != "audit.checkpoints" {
		t.Fatal(CheckpointsPath(path))
	}
	cps, err := ParseCheckpoints("audit.checkpoints", mustRead(t, CheckpointsPath(path)), key.Public().(ed25519.PublicKey))
	if err != nil || len(cps) != 2 || cps[0].Size != 3 || cps[1].Size != 5 {
		t.Fatalf("checkpoints %+v %v", cps, err)
	}
	if rep, _ := VerifyWith(path, VerifyOptions{Checkpoints: cps}); !rep.OK {
		t.Fatalf("%s", rep)
	}
	// every CheckpointEvery entries, decisions or not
	checkpointEvery = 8
	defer func() { checkpointEvery = CheckpointEvery }()
	for i := 5; i < 8; i++ {
		l.Append(Entry{Actor: "a", Event: EventSearched})
	}
	cps, _ = ParseCheckpoints("audit.checkpoints", mustRead(t, CheckpointsPath(path)), key.Public().(ed25519.PublicKey))
	if len(cps) != 3 || cps[2].Size != 8 {
		t.Fatalf("%d checkpoints, last %+v", len(cps), cps[len(cps)-1])
	}
	// a checkpoint that cannot be written: the append stands, Warn hears it
	os.Remove(CheckpointsPath(path))
	os.Mkdir(CheckpointsPath(path), 0o700)
	var warned []error
	l.Warn = func(err error) { warned = append(warned, err) }
	if _, err := l.Append(Entry{Actor: "a", Event: EventDenied}); err != nil {
		t.Fatalf("append failed on its checkpoint: %v", err)
	}
	if len(warned) != 1 {
		t.Fatalf("warnings: %v", warned)
	}
}
