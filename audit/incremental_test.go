package audit

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"testing"
)

// incremental runs VerifyIncremental with the record beside the log and
// checks that its report is the one VerifyWith gives for the same log.
func incremental(t *testing.T, path string, o VerifyOptions) Verification {
	t.Helper()
	var last, total int64
	full := o
	if full.Recorded == nil {
		full.Recorded = LoadVerified(path) // what VerifyIncremental holds the log to
	}
	got, err := VerifyIncremental(context.Background(), path, VerifiedPath(path), o, func(done, size int64) {
		if done < last {
			t.Fatalf("progress went back from %d to %d", last, done)
		}
		last, total = done, size
	})
	if err != nil || got.SaveErr != nil {
		t.Fatalf("VerifyIncremental: %v, save: %v", err, got.SaveErr)
	}
	want, err := VerifyWith(path, full)
	if err != nil {
		t.Fatal(err)
	}
	if mustJSON(t, got.Report) != mustJSON(t, want) || got.Report.String() != want.String() {
		t.Fatalf("incremental %s\nfull        %s", mustJSON(t, got.Report), mustJSON(t, want))
	}
	if got.OK && (last != total || got.End != total) {
		t.Fatalf("progress ended at %d of %d, End %d", last, total, got.End)
	}
	return got
}

// TestVerifyIncrementalResumesAfterTheVerifiedPrefix: the second start
// checks the recorded prefix by hash and verifies only the new entries;
// the chain it hands back goes on with later appends.
func TestVerifyIncrementalResumesAfterTheVerifiedPrefix(t *testing.T) {
	path := newLog(t, 12)
	first := incremental(t, path, VerifyOptions{})
	if !first.OK || first.Resumed != 0 || first.Entries != 12 {
		t.Fatalf("first pass: %+v", first)
	}
	l, err := Open(path, stepClock())
	if err != nil {
		t.Fatal(err)
	}
	for i := 12; i < 15; i++ {
		if _, err := l.Append(sampleEntry(i)); err != nil {
			t.Fatal(err)
		}
	}
	second := incremental(t, path, VerifyOptions{})
	if !second.OK || second.Resumed != first.End || second.Entries != 15 {
		t.Fatalf("second pass resumed %d bytes (want %d), %d entries", second.Resumed, first.End, second.Entries)
	}
	// nothing new: the whole log is the prefix
	third := incremental(t, path, VerifyOptions{})
	if third.Resumed != second.End || !third.OK {
		t.Fatalf("third pass resumed %d of %d", third.Resumed, second.End)
	}
	// the resumed chain knows its last entries, so the head check works from it
	if bad := third.Chain.CheckAnchor(ReadAnchor(path)); bad != nil {
		t.Fatalf("head check on the resumed chain: %s", bad)
	}
	// the returned chain takes the next append
	e, err := l.Append(sampleEntry(15))
	if err != nil {
		t.Fatal(err)
	}
	line, _ := e.Line()
	if _, ok := third.Chain.Feed(line); !ok || third.Chain.Len() != 16 {
		t.Fatalf("chain after resume refused the next entry: %+v", third.Chain.Bad())
	}
}

// TestVerifiedPrefixCatchesARewriteInsideIt: entries inside the recorded
// prefix are rewritten (same length, so offsets and counts still fit) and
// the resumed check finds it exactly where a full verification does.
func TestVerifiedPrefixCatchesARewriteInsideIt(t *testing.T) {
	for name, rewrite := range map[string]func(lines [][]byte){
		"a byte of a value": func(lines [][]byte) {
			lines[3] = bytes.Replace(lines[3], []byte("living-room"), []byte("living-ROOM"), 1)
		},
		"first entry":                       func(lines [][]byte) { lines[0] = bytes.Replace(lines[0], []byte("agent-0"), []byte("agent-9"), 1) },
		"two swapped":                       func(lines [][]byte) { lines[5], lines[6] = lines[6], lines[5] },
		"a line replaced by an earlier one": func(lines [][]byte) { lines[4] = lines[2] },
	} {
		t.Run(name, func(t *testing.T) {
			path := newLog(t, 12)
			if v := incremental(t, path, VerifyOptions{}); !v.OK {
				t.Fatalf("clean log: %s", v.Report)
			}
			lines := readLines(t, path)
			rewrite(lines)
			writeFile(t, path, bytes.Join(lines, nil))
			got := incremental(t, path, VerifyOptions{})
			if got.OK || got.Resumed != 0 {
				t.Fatalf("rewrite inside the verified prefix not found: %s (resumed %d bytes)", got.Report, got.Resumed)
			}
		})
	}
}

// TestVerifyIncrementalAfterCutOrGarbage: a log cut below the recorded
// prefix, or with garbage after it, reports what a full pass reports.
func TestVerifyIncrementalAfterCutOrGarbage(t *testing.T) {
	path := newLog(t, 10)
	incremental(t, path, VerifyOptions{})
	data, _ := os.ReadFile(path)
	writeFile(t, path, append(bytes.Clone(data), "not json\n"...))
	if got := incremental(t, path, VerifyOptions{}); got.OK || got.Reason != ReasonGarbage || got.Resumed == 0 {
		t.Fatalf("garbage after the prefix: %s, resumed %d", got.Report, got.Resumed)
	}
	lines := readLines(t, path)
	writeFile(t, path, bytes.Join(lines[:6], nil))
	if got := incremental(t, path, VerifyOptions{}); got.OK {
		t.Fatalf("a log cut below the prefix verified: %s", got.Report)
	}
	// a record that is not one costs a full pass, nothing else
	writeFile(t, path, data)
	writeFile(t, VerifiedPath(path), []byte("{garbage"))
	if got := incremental(t, path, VerifyOptions{}); !got.OK || got.Resumed != 0 {
		t.Fatalf("garbage record: %s, resumed %d", got.Report, got.Resumed)
	}
}

// TestVerifyIncrementalChecksCheckpointsInsideThePrefix: a checkpoint whose
// entry lies in the recorded prefix is checked from the record, and one that
// disagrees with the log fails as it does in a full pass.
func TestVerifyIncrementalChecksCheckpointsInsideThePrefix(t *testing.T) {
	pub, key, _ := ed25519.GenerateKey(nil)
	path := newLog(t, 8)
	good, err := ParseCheckpoints("cp", checkpointOf(t, path, key), pub)
	if err != nil {
		t.Fatal(err)
	}
	o := VerifyOptions{Checkpoints: good, Key: pub}
	if v := incremental(t, path, o); !v.OK || v.Checkpoints != 1 {
		t.Fatalf("%s", v.Report)
	}
	l, _ := Open(path, stepClock())
	l.Append(sampleEntry(8))
	if v := incremental(t, path, o); !v.OK || v.Resumed == 0 {
		t.Fatalf("resumed %d: %s", v.Resumed, v.Report)
	}
	forged := good[0]
	forged.Hash = "00" + forged.Hash[2:]
	if v := incremental(t, path, VerifyOptions{Checkpoints: []Checkpoint{forged}, Key: pub}); v.OK || v.Reason != ReasonEdited {
		t.Fatalf("a checkpoint the prefix does not extend passed: %s", v.Report)
	}
	// verified without the key: the record does not stand for a check with it
	if v := incremental(t, path, VerifyOptions{}); !v.OK || v.Resumed != 0 {
		t.Fatalf("record of another key reused: resumed %d", v.Resumed)
	}
}

func TestVerifyIncrementalStopsWhenCancelled(t *testing.T) {
	path := writeBigLog(t, 20000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := VerifyIncremental(ctx, path, VerifiedPath(path), VerifyOptions{}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if _, err := os.Stat(VerifiedPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a cancelled pass wrote a record: %v", err)
	}
}
