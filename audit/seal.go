package audit

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gowebpki/jcs"

	"github.com/vigil-dev/vigil/internal/atomicfile"
)

// ErrNothingToSeal: the log's end matches its head and its chain verifies.
var ErrNothingToSeal = errors.New("audit: the log is intact; there is nothing to seal")

// TailRef names one end of a chain: an entry's seq and hash, and the log's
// size in bytes just after it (0 when not known).
type TailRef struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
	Size int64  `json:"size"`
}

// SealDetails is the details object of a sealed entry.
type SealDetails struct {
	Reason   string   `json:"reason"`
	Expected *TailRef `json:"expected"` // the end the head recorded; null when there was no head
	Found    *TailRef `json:"found"`    // the last intact entry, which the seal chains onto; null for none
	Broken   string   `json:"broken,omitempty"`
	MovedTo  string   `json:"moved_to,omitempty"` // damaged lines moved aside, beside the log
	Bytes    int64    `json:"bytes,omitempty"`
	// Signature covers sealSigningDomain and the RFC 8785 form of every
	// other field of details.
	Signature *SealSignature `json:"signature,omitempty"`
}

// SealSignature is the operator's Ed25519 signature on a seal.
type SealSignature struct {
	Alg   string `json:"alg"`
	KeyID string `json:"key_id"`
	Value string `json:"value"`
}

const sealSigningDomain = "vigil audit seal v1\n"

// KeyID names an Ed25519 public key the way task results do.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return "ed25519:" + hex.EncodeToString(sum[:8])
}

// Seal is the one explicit way past a damaged log. It keeps the longest
// prefix of the log whose chain verifies, moves any damaged lines after it
// aside (audit.log.sealed-<time>, never deleted), and appends a "sealed"
// entry signed with key that records the end the head expected, the end
// found, and reason (already masked). The gap stays in the chain for ever:
// Verify reports it on every run, and a checkpoint taken before the seal
// still fails against the sealed log if entries it covered are gone.
func (l *Log) Seal(actor, reason string, key ed25519.PrivateKey) (Entry, error) {
	lk, err := l.lock()
	if err != nil {
		return Entry{}, fmt.Errorf("audit: lock: %w", err)
	}
	defer lk()
	// a torn tail is moved aside first; its own entry cannot be written on a damaged log
	var damaged *DamagedError
	if err := l.repairTornLocked(); err != nil && !errors.As(err, &damaged) {
		return Entry{}, err
	}
	_, _, tailErr := l.checkTail()
	if tailErr != nil && !errors.As(tailErr, &damaged) {
		return Entry{}, tailErr
	}
	c, end, last, lost, err := l.intactPrefix(key.Public().(ed25519.PublicKey))
	if err != nil {
		return Entry{}, err
	}
	if tailErr == nil && c.Bad() == nil && lost == nil {
		return Entry{}, ErrNothingToSeal
	}
	d := SealDetails{Reason: reason}
	if h, hs := loadHead(l.path); hs == headOK {
		d.Expected = &TailRef{Seq: h.Seq, Hash: h.Hash, Size: h.Size}
	}
	if c.Len() > 0 {
		d.Found = &TailRef{Seq: last.Seq, Hash: last.Hash, Size: end}
	}
	switch {
	case c.Bad() != nil:
		d.Broken = c.Bad().String()
	case damaged != nil:
		d.Broken = damaged.Error()
	case lost != nil:
		d.Broken = lost.String()
	}
	if st, err := os.Stat(l.path); err == nil && st.Size() > end {
		if d.MovedTo, d.Bytes, err = l.moveAside(end, st.Size()); err != nil {
			return Entry{}, err
		}
	}
	details, err := signSeal(d, key)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{Actor: actor, Event: EventSealed, Success: true, Details: details}
	if e.Details, err = canonicalDetails(e.Details); err != nil {
		return Entry{}, err
	}
	out, err := l.appendAfter(e, last, c.Len() > 0)
	if err != nil {
		return Entry{}, err
	}
	l.maybeCheckpoint(out)
	return out, nil
}

// intactPrefix scans the longest prefix of the log that verifies: its
// chain, the offset after it and its last entry. lost is what proves the
// log was longer, held like a head: the prefix verified before
// (audit.log.verified) and the checkpoints Append wrote beside the log
// (checked with pub; a file that does not verify proves nothing here, and
// `vigil audit verify` names it). A log cut below them, with its head
// rewritten, has something to seal.
func (l *Log) intactPrefix(pub ed25519.PublicKey) (c *Chain, end int64, last Entry, lost *Report, err error) {
	o := VerifyOptions{Recorded: LoadVerified(l.path)}
	o.Local, _, _ = LocalCheckpoints(l.path, pub)
	rec := o.Recorded
	found := Report{OK: true, at: map[int64]string{}}
	for _, cp := range o.Local {
		found.at[cp.Size-1] = ""
	}
	c = NewChain()
	if _, err := Scan(l.path, 0, func(ln Line) bool {
		e, ok := c.FeedParsed(ln.Entry, ln.Err)
		if !ok {
			return false
		}
		line, _ := e.Line()
		end = ln.Offset + int64(len(line)) + 1
		last = e
		if e.Seq == 0 {
			found.First = e.Hash
		}
		if rec != nil && e.Seq == rec.Entries-1 {
			found.recorded = e.Hash
		}
		if _, ok := found.at[e.Seq]; ok {
			found.at[e.Seq] = e.Hash
		}
		return true
	}); err != nil {
		return nil, 0, Entry{}, nil, err
	}
	found.Entries, found.Sealed = c.Len(), c.Sealed()
	if held := found.holds(o); !held.OK {
		lost = &held
	}
	return c, end, last, lost, nil
}

// moveAside copies the log's bytes [from, to) to audit.log.sealed-<time>
// and truncates the log to from.
func (l *Log) moveAside(from, to int64) (string, int64, error) {
	f, err := openFile(l.path, os.O_RDWR, 0)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	buf := make([]byte, to-from)
	if _, err := f.ReadAt(buf, from); err != nil {
		return "", 0, err
	}
	now := l.now().UTC().Format("20060102T150405.000000000Z")
	aside := fmt.Sprintf("%s.sealed-%s", l.path, now)
	for i := 1; ; i++ {
		if _, err := os.Lstat(aside); errors.Is(err, os.ErrNotExist) {
			break
		}
		aside = fmt.Sprintf("%s.sealed-%s-%d", l.path, now, i)
	}
	if err := atomicfile.Write(aside, buf, 0o600); err != nil {
		return "", 0, err
	}
	if err := f.Truncate(from); err != nil {
		return "", 0, err
	}
	if err := f.Sync(); err != nil {
		return "", 0, err
	}
	return filepath.Base(aside), int64(len(buf)), nil
}

func signSeal(d SealDetails, key ed25519.PrivateKey) (json.RawMessage, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, errors.New("audit: seal: the operator key is needed to sign a seal")
	}
	d.Signature = nil
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	msg, err := sealSigningBytes(raw)
	if err != nil {
		return nil, err
	}
	d.Signature = &SealSignature{Alg: "Ed25519", KeyID: KeyID(key.Public().(ed25519.PublicKey)),
		Value: base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg))}
	return json.Marshal(d)
}

// sealSigningBytes is what a seal's signature covers: the domain and the
// canonical form of details without its signature field (every other field,
// known or not, is covered).
func sealSigningBytes(details []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(details, &m); err != nil {
		return nil, err
	}
	delete(m, "signature")
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	canon, err := jcs.Transform(raw)
	if err != nil {
		return nil, err
	}
	return append([]byte(sealSigningDomain), canon...), nil
}

// checkSeal checks a sealed entry: its details name the entry it chains onto
// and, when pub is known, carry the operator's signature.
func checkSeal(e Entry, pub ed25519.PublicKey) (SealDetails, error) {
	var d SealDetails
	if err := json.Unmarshal(e.Details, &d); err != nil {
		return d, fmt.Errorf("seal details: %v", err)
	}
	switch {
	case d.Found == nil && e.Seq != 0, d.Found != nil && (d.Found.Seq != e.Seq-1 || d.Found.Hash != e.Prev):
		return d, errors.New("the seal does not name the entry it follows")
	}
	if pub == nil {
		return d, nil
	}
	if d.Signature == nil {
		return d, errors.New("the seal is not signed")
	}
	sig, err := base64.StdEncoding.DecodeString(d.Signature.Value)
	if err != nil {
		return d, errors.New("the seal's signature is not base64")
	}
	msg, err := sealSigningBytes(e.Details)
	if err != nil {
		return d, err
	}
	if !ed25519.Verify(pub, msg, sig) {
		return d, fmt.Errorf("the seal is not signed by the operator key %s", KeyID(pub))
	}
	return d, nil
}
