package audit

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"os"
	"testing"
)

// keyedLog writes n entries through Append with the operator key beside the
// log, so every approval leaves a checkpoint in audit.checkpoints.
func keyedLog(t *testing.T, n int) (string, *Log, ed25519.PrivateKey) {
	t.Helper()
	path := newLog(t, 0)
	key := testKey(t, path)
	l := openLog(t, path)
	l.Warn = func(err error) { t.Errorf("checkpoint: %v", err) }
	for i := 0; i < n; i++ {
		if _, err := l.Append(sampleEntry(i)); err != nil {
			t.Fatal(err)
		}
	}
	return path, l, key
}

// TestLocalCheckpointsCatchACutUnlessASealRecordedIt: the checkpoints
// Append wrote beside the log catch a cut that moved the head along; after
// a seal of the cut they are superseded by the seal's own checkpoint and
// the log verifies with them, while the same notes given as checkpoints
// kept elsewhere still fail.
func TestLocalCheckpointsCatchACutUnlessASealRecordedIt(t *testing.T) {
	path, _, key := keyedLog(t, 12) // decisions at #1, #3, #7, #9: four notes
	pub := key.Public().(ed25519.PublicKey)
	local, torn, err := LocalCheckpoints(path, pub)
	if err != nil || torn || len(local) != 4 || local[3].Size != 10 {
		t.Fatalf("local checkpoints: %+v torn %v %v", local, torn, err)
	}
	if rep, _ := VerifyWith(path, VerifyOptions{Key: pub, Local: local}); !rep.OK || rep.Checkpoints != 4 {
		t.Fatalf("intact log: %s", rep)
	}
	// cut to 6 entries and move the head: the log alone verifies, the notes at 8 and 10 do not
	lines := readLines(t, path)
	oldHead, _ := os.ReadFile(HeadPath(path))
	writeFile(t, path, bytes.Join(lines[:6], nil))
	rewriteFrom(t, path, len(lines), func(*Entry) {}, true) // edits nothing, moves the head
	if rep := mustVerify(t, path); !rep.OK {
		t.Fatalf("setup: the cut log alone should verify: %s", rep)
	}
	if rep, _ := VerifyWith(path, VerifyOptions{Key: pub, Local: local}); rep.OK || rep.Reason != ReasonTruncated || rep.Index != 6 {
		t.Fatalf("cut under a local checkpoint: %s", rep)
	}
	// sealed: the seal's note (size 7) supersedes the notes at 8 and 10, not those at 2 and 4
	// the head as a real cut leaves it (naming what was lost), then the seal
	writeFile(t, HeadPath(path), oldHead)
	l, _ := Open(path, stepClock()) // refuses to record on the damaged log: the Log is for Seal
	if _, err := l.Seal("operator:ada", "lost 6-11", key); err != nil {
		t.Fatal(err)
	}
	local, _, err = LocalCheckpoints(path, pub)
	if err != nil || len(local) != 5 || local[4].Size != 7 {
		t.Fatalf("after the seal: %+v %v", local, err)
	}
	rep, _ := VerifyWith(path, VerifyOptions{Key: pub, Local: local})
	if !rep.OK || rep.Checkpoints != 3 || len(rep.Sealed) != 1 {
		t.Fatalf("sealed log with its local checkpoints: %s (%d held)", rep, rep.Checkpoints)
	}
	if rep, _ := VerifyWith(path, VerifyOptions{Key: pub, Checkpoints: local}); rep.OK {
		t.Fatalf("the superseded note, kept elsewhere, passed: %s", rep)
	}
}

// TestLocalCheckpointsTornLastNote: a note cut short at the end of the
// file (a crash while it was written) is left out and reported; a broken
// note before others is an error; a note signed by another key fails.
func TestLocalCheckpointsTornLastNote(t *testing.T) {
	path, _, key := keyedLog(t, 3)
	pub := key.Public().(ed25519.PublicKey)
	cpPath := CheckpointsPath(path)
	whole, _ := os.ReadFile(cpPath)
	writeFile(t, cpPath, append(bytes.Clone(whole), whole[:len(whole)/2]...))
	cps, torn, err := LocalCheckpoints(path, pub)
	if err != nil || !torn || len(cps) != 1 {
		t.Fatalf("torn last note: %+v torn %v %v", cps, torn, err)
	}
	writeFile(t, cpPath, append(append(bytes.Clone(whole[:len(whole)/2]), "\n\n"...), whole...))
	if _, _, err := LocalCheckpoints(path, pub); err == nil {
		t.Fatal("a broken note followed by a whole one was accepted")
	}
	writeFile(t, cpPath, whole)
	var ce *CheckpointError
	if _, _, err := LocalCheckpoints(path, otherKey().Public().(ed25519.PublicKey)); !errors.As(err, &ce) || ce.Reason != ReasonBadSignature {
		t.Fatalf("another key: %v", err)
	}
	os.Remove(cpPath)
	if cps, torn, err := LocalCheckpoints(path, pub); err != nil || torn || len(cps) != 0 {
		t.Fatalf("no file: %+v %v %v", cps, torn, err)
	}
}
