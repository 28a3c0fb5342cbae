package audit

import (
	"encoding/json"
	"fmt"
	"path/filepath"
)

// The verified prefix (audit.log.verified) is a viewer's cache, and also
// evidence: it says how long the log was when it last verified. A log that
// no longer holds that prefix — fewer entries (cut, perhaps with its head
// rewritten to match), another entry #0 (replaced) or another entry at
// the prefix's end (rewritten before it) — is broken, at every start, until
// `vigil audit seal` records the break: a sealed entry the record does not
// list excuses it, and the next good verification records the sealed log.
// The record therefore never moves backwards on its own (VerifyIncremental
// writes only what verified against it, and never a shorter record over a
// longer one a concurrent viewer wrote).
//
// Like the rest of the home it is no stronger than the home's permissions:
// whoever can delete it can hide a cut from it (checkpoints kept elsewhere
// catch that).

// LoadVerified reads the record of the verified prefix beside the log at
// logPath (VerifiedPath), whatever key it was verified with; nil when there
// is none or it is not a record (a garbled record proves nothing).
func LoadVerified(logPath string) *Verified { return readVerified(VerifiedPath(logPath)) }

func readVerified(cachePath string) *Verified {
	if cachePath == "" {
		return nil
	}
	b, err := readSmall(cachePath, 64<<20)
	if err != nil {
		return nil
	}
	var r Verified
	// a record RecordSeen wrote has no prefix hash nor length: evidence only
	if json.Unmarshal(b, &r) != nil || r.Version != verifiedVersion || r.Offset < 0 || r.Entries <= 0 ||
		!isHash(r.Last) || !isHash(r.First) || !(r.Prefix == "" && r.Offset == 0 || r.Offset > 0 && isHash(r.Prefix)) {
		return nil
	}
	r.source = filepath.Base(cachePath)
	return &r
}

// againstRecorded checks a good chain against the prefix rec says verified
// before; nil when the log still holds it or a seal since recorded the
// break.
func (r Report) againstRecorded(rec *Verified) *Report {
	if rec == nil || len(r.Sealed) > len(rec.Sealed) {
		return nil
	}
	fail := func(idx int64, reason, detail string) *Report {
		return &Report{Entries: r.Entries, Index: idx, Reason: reason, Checkpoint: rec.source,
			Checkpoints: r.Checkpoints, Sealed: r.Sealed,
			Detail: detail + "; `vigil audit seal` records the break"}
	}
	switch {
	case r.Entries == 0:
		return fail(0, ReasonTruncated, fmt.Sprintf("the log is empty, but %d entries of it verified before (%s): it was deleted or cut",
			rec.Entries, rec.source))
	case r.First != rec.First:
		return fail(0, ReasonReplaced, fmt.Sprintf("entry #0 is not the one that verified before (%s): the log was replaced by another chain",
			rec.source))
	case r.Entries < rec.Entries:
		return fail(r.Entries, ReasonTruncated, fmt.Sprintf("the log has %d entries, but %d verified before (%s): it was cut, or rolled back to an older copy",
			r.Entries, rec.Entries, rec.source))
	case r.recorded != rec.Last:
		return fail(rec.Entries-1, ReasonEdited, fmt.Sprintf("entry #%d is not the one that verified before (%s): the log was rewritten before it",
			rec.Entries-1, rec.source))
	}
	return nil
}

// keepsLonger: the record at cachePath now holds more than next (a viewer
// verified more since this pass began), so next must not replace it.
func keepsLonger(cachePath string, next Verified) bool {
	cur := readVerified(cachePath)
	return cur != nil && cur.Entries > next.Entries && len(cur.Sealed) >= len(next.Sealed)
}

// RecordSeen keeps, in the record of the verified prefix beside the log at
// logPath, that a viewer saw a chain of entries entries verify (entry #0
// first, entry #entries-1 last, with those seals) — when the record holds
// less. A viewer that verified appends as they came (a large log's screen
// records only its full passes) and then found the log cut calls it, so the
// cut it found is proved on the next start too, until a seal. The record
// has no prefix hash (the bytes are gone): the next start reads from the
// beginning.
func RecordSeen(logPath string, entries int64, first, last string, sealed []SealedGap) error {
	if !isHash(first) || !isHash(last) || entries <= 0 {
		return fmt.Errorf("audit: a seen chain needs its entries and the hashes of its first and last entries")
	}
	rec := Verified{Version: verifiedVersion, Entries: entries, First: first, Last: last, Sealed: sealed}
	if cur := readVerified(VerifiedPath(logPath)); cur != nil && cur.Entries >= entries {
		return nil // it proves as much already
	}
	return saveVerified(VerifiedPath(logPath), rec)
}
