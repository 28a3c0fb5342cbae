package audit

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// verifyStart is what a viewer does on each start: VerifyIncremental with
// the record beside the log.
func verifyStart(t *testing.T, path string) Verification {
	t.Helper()
	v, err := VerifyIncremental(context.Background(), path, VerifiedPath(path), VerifyOptions{}, nil)
	if err != nil || v.SaveErr != nil {
		t.Fatalf("VerifyIncremental: %v, save: %v", err, v.SaveErr)
	}
	return v
}

// cutWithHead truncates the real log file after keep entries and rewrites
// its head to match, as an attacker who can write the home would: the log
// alone then verifies.
func cutWithHead(t *testing.T, path string, keep int) {
	t.Helper()
	lines := readLines(t, path)
	size := int64(len(bytes.Join(lines[:keep], nil)))
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
	rewriteFrom(t, path, keep, func(*Entry) {}, true) // edits nothing, moves the head
	if rep := mustVerify(t, path); !rep.OK {
		t.Fatalf("setup: the cut log alone should verify: %s", rep)
	}
}

// TestVerifiedPrefixProvesACutUntilSealed (issue 36, item 10): a log cut
// below the prefix that verified before, with its head rewritten, is
// broken at every start, and the record is not rewritten shorter; a seal
// records the break, and the sealed log then verifies and is recorded.
func TestVerifiedPrefixProvesACutUntilSealed(t *testing.T) {
	path := newLog(t, 10)
	key := testKey(t, path)
	if v := verifyStart(t, path); !v.OK || v.Entries != 10 {
		t.Fatalf("clean log: %s", v.Report)
	}
	record, _ := os.ReadFile(VerifiedPath(path))
	cutWithHead(t, path, 6)
	for start := 1; start <= 2; start++ {
		v := verifyStart(t, path)
		if v.OK || v.Reason != ReasonTruncated || v.Index != 6 || !strings.Contains(v.Detail, "10 verified before") {
			t.Fatalf("start %d after the cut: %s", start, v.Report)
		}
		if now, _ := os.ReadFile(VerifiedPath(path)); !bytes.Equal(now, record) {
			t.Fatalf("start %d rewrote the record:\n%s\nwas\n%s", start, now, record)
		}
	}
	// the same evidence for a full pass that is given the record
	if rep, _ := VerifyWith(path, VerifyOptions{Recorded: LoadVerified(path)}); rep.OK || rep.Reason != ReasonTruncated {
		t.Fatalf("VerifyWith with the record: %s", rep)
	}
	// the head agrees with the cut log: the record is what there is to seal
	l, err := Open(path, stepClock())
	if err != nil {
		t.Fatal(err)
	}
	e, err := l.Seal("operator:ada", "lost 6-9", key)
	if err != nil {
		t.Fatalf("seal: %v", err)
	}
	if !strings.Contains(string(e.Details), "10 verified before") {
		t.Fatalf("the seal does not say what was lost: %s", e.Details)
	}
	v := verifyStart(t, path)
	if !v.OK || v.Entries != 7 || len(v.Sealed) != 1 {
		t.Fatalf("sealed log: %s", v.Report)
	}
	if rec := LoadVerified(path); rec == nil || rec.Entries != 7 {
		t.Fatalf("the sealed log was not recorded: %+v", rec)
	}
	if _, err := l.Seal("operator:ada", "again", key); !errors.Is(err, ErrNothingToSeal) {
		t.Fatalf("a second seal: %v", err)
	}
}

// TestVerifiedPrefixProvesAReplacementOrRewrite: a log replaced by another
// chain, rewritten before the prefix's end, or deleted (each with a head
// to match) is broken; a log that only grew is not.
func TestVerifiedPrefixProvesAReplacementOrRewrite(t *testing.T) {
	for name, damage := range map[string]func(t *testing.T, path string){
		"replaced": func(t *testing.T, path string) {
			other := newLog(t, 12)
			rewriteFrom(t, other, 0, func(e *Entry) { e.Actor = "agent-other" }, true) // another chain
			for _, p := range []string{other, HeadPath(other)} {
				b, _ := os.ReadFile(p)
				writeFile(t, strings.Replace(p, other, path, 1), b)
			}
		},
		"rewritten": func(t *testing.T, path string) {
			rewriteFrom(t, path, 3, func(e *Entry) { e.Target = "kitchen" }, true)
		},
		"deleted": func(t *testing.T, path string) {
			os.Remove(path)
			os.Remove(HeadPath(path))
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := newLog(t, 10)
			if v := verifyStart(t, path); !v.OK {
				t.Fatalf("clean log: %s", v.Report)
			}
			record, _ := os.ReadFile(VerifiedPath(path))
			damage(t, path)
			if rep := mustVerify(t, path); !rep.OK {
				t.Fatalf("setup: the damaged log alone should verify: %s", rep)
			}
			v := verifyStart(t, path)
			if v.OK {
				t.Fatalf("a %s log verified against the record", name)
			}
			if now, _ := os.ReadFile(VerifiedPath(path)); !bytes.Equal(now, record) {
				t.Fatalf("the record was rewritten")
			}
		})
	}
	path := newLog(t, 10)
	verifyStart(t, path)
	l, _ := Open(path, stepClock())
	if _, err := l.Append(sampleEntry(10)); err != nil {
		t.Fatal(err)
	}
	if v := verifyStart(t, path); !v.OK || v.Entries != 11 || LoadVerified(path).Entries != 11 {
		t.Fatalf("a log that grew: %s", v.Report)
	}
}

// TestVerifiedRecordNeverShrinks: a viewer whose pass saw fewer entries
// than the record another viewer wrote since does not replace it.
func TestVerifiedRecordNeverShrinks(t *testing.T) {
	path := newLog(t, 10)
	verifyStart(t, path)
	short, _ := os.ReadFile(VerifiedPath(path))
	l, _ := Open(path, stepClock())
	for i := 10; i < 14; i++ {
		if _, err := l.Append(sampleEntry(i)); err != nil {
			t.Fatal(err)
		}
	}
	verifyStart(t, path)
	long := LoadVerified(path)
	var shortRec Verified
	if err := json.Unmarshal(short, &shortRec); err != nil {
		t.Fatal(err)
	}
	if !keepsLonger(VerifiedPath(path), shortRec) || long.Entries != 14 {
		t.Fatalf("a 10-entry record would replace the 14-entry one (%d)", long.Entries)
	}
}

// TestSealSeesACutBelowALocalCheckpoint: a cut with its head rewritten and
// no verified prefix left (deleted too) fails against the checkpoints
// Append wrote; seal must not call that log intact (it did: "nothing to
// seal", and verify stayed BROKEN with no way on).
func TestSealSeesACutBelowALocalCheckpoint(t *testing.T) {
	path, _, key := keyedLog(t, 12) // notes at 2, 4, 8, 10
	pub := key.Public().(ed25519.PublicKey)
	cutWithHead(t, path, 6)
	os.Remove(VerifiedPath(path))
	local, _, _ := LocalCheckpoints(path, pub)
	if rep, _ := VerifyWith(path, VerifyOptions{Key: pub, Local: local}); rep.OK {
		t.Fatal("setup: the cut should fail against the local checkpoints")
	}
	l, _ := Open(path, stepClock())
	e, err := l.Seal("operator:ada", "lost 6-11", key)
	if err != nil {
		t.Fatalf("seal: %v", err)
	}
	if !strings.Contains(string(e.Details), "audit.checkpoints") {
		t.Fatalf("the seal does not say what proved the cut: %s", e.Details)
	}
	local, _, _ = LocalCheckpoints(path, pub)
	if rep, _ := VerifyWith(path, VerifyOptions{Key: pub, Local: local}); !rep.OK || len(rep.Sealed) != 1 {
		t.Fatalf("sealed: %s", rep)
	}
}

// TestRecordSeenProvesWhatAViewerSaw: a viewer that verified appends live
// keeps the chain it saw when it finds the log cut; the record (no prefix
// hash: evidence only) then proves the cut to the next start and to Seal,
// and is never lowered by RecordSeen itself.
func TestRecordSeenProvesWhatAViewerSaw(t *testing.T) {
	path := newLog(t, 12)
	key := testKey(t, path)
	verifyStart(t, path) // records 12
	lines := readLines(t, path)
	var first, last Entry
	json.Unmarshal(bytes.TrimSpace(lines[0]), &first)
	json.Unmarshal(bytes.TrimSpace(lines[11]), &last)
	cutWithHead(t, path, 8)
	os.Remove(VerifiedPath(path))
	if err := RecordSeen(path, 12, first.Hash, last.Hash, nil); err != nil {
		t.Fatal(err)
	}
	if err := RecordSeen(path, 10, first.Hash, last.Hash, nil); err != nil || LoadVerified(path).Entries != 12 {
		t.Fatalf("RecordSeen lowered the record: %v", err)
	}
	if v := verifyStart(t, path); v.OK || v.Reason != ReasonTruncated || v.Index != 8 {
		t.Fatalf("a start after the cut a viewer saw: %s", v.Report)
	}
	l, _ := Open(path, stepClock())
	if _, err := l.Seal("operator:ada", "lost 8-11", key); err != nil {
		t.Fatalf("seal: %v", err)
	}
	if v := verifyStart(t, path); !v.OK || LoadVerified(path).Entries != 9 || LoadVerified(path).Prefix == "" {
		t.Fatalf("sealed: %s", v.Report)
	}
}
