package audit

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// CheckpointEvery is how often (in entries) Append writes a checkpoint to
// audit.checkpoints even without a decision: often enough that a copy taken
// at any time is recent, rare enough that its fsync and signature cost
// nothing next to the appends (one in a thousand).
const CheckpointEvery = 1000

// checkpointEvery is CheckpointEvery; tests lower it.
var checkpointEvery int64 = CheckpointEvery

// A Checkpoint says "this log had Size entries and its last one hashed to
// Hash", signed with the operator key as a C2SP signed note
// (golang.org/x/mod/sumdb/note, the format of Go's checksum database and
// Sigstore's logs). A log extends a checkpoint when its entry #Size-1 has Hash
// and the chain up to it verifies; kept outside the log's folder, checkpoints
// catch a cut, a rollback to an older copy, or a log replaced by another valid
// chain, which the head beside the log cannot.
//
// The note's text follows C2SP tlog-checkpoint:
//
//	vigil-audit/<first 16 hex digits of entry #0's hash>   origin: which log
//	<size>                                                  entries covered
//	<base64 of the 32-byte hash of entry #size-1>           the chain's end then
//
// The signature line names the origin as the key name.
type Checkpoint struct {
	Origin string
	Size   int64
	Hash   string // hex, as in the log
	Source string // where it was read from (for reports); not signed
}

// OriginPrefix starts every checkpoint's origin line.
const OriginPrefix = "vigil-audit/"

// Origin names the log whose entry #0 has hash firstHash.
func Origin(firstHash string) string {
	if len(firstHash) > 16 {
		firstHash = firstHash[:16]
	}
	return OriginPrefix + firstHash
}

// CheckpointsPath is where Append writes checkpoints: audit.checkpoints
// beside audit.log.
func CheckpointsPath(logPath string) string {
	return strings.TrimSuffix(logPath, ".log") + ".checkpoints"
}

// Text is the note's signed text.
func (c Checkpoint) Text() (string, error) {
	raw, err := hex.DecodeString(c.Hash)
	if err != nil || len(raw) != 32 {
		return "", fmt.Errorf("checkpoint: hash %q is not 32 bytes of hex", c.Hash)
	}
	return fmt.Sprintf("%s\n%d\n%s\n", c.Origin, c.Size, base64.StdEncoding.EncodeToString(raw)), nil
}

// SignCheckpoint returns c as a signed note.
func SignCheckpoint(c Checkpoint, key ed25519.PrivateKey) ([]byte, error) {
	text, err := c.Text()
	if err != nil {
		return nil, err
	}
	s, err := noteSigner(key, c.Origin)
	if err != nil {
		return nil, err
	}
	return note.Sign(&note.Note{Text: text}, s)
}

// noteSigner builds sumdb/note's signer from a raw Ed25519 key: the package
// only takes its own "PRIVATE+KEY+name+hash+data" encoding.
func noteSigner(key ed25519.PrivateKey, name string) (note.Signer, error) {
	vkey, err := note.NewEd25519VerifierKey(name, key.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, err
	}
	parts := strings.SplitN(vkey, "+", 3) // name, hash, key data (only the base64 data may hold a +)
	if len(parts) != 3 {
		return nil, fmt.Errorf("checkpoint: key name %q", name)
	}
	data := append([]byte{1}, key.Seed()...) // 1: sumdb/note's Ed25519 algorithm
	return note.NewSigner("PRIVATE+KEY+" + name + "+" + parts[1] + "+" + base64.StdEncoding.EncodeToString(data))
}

// CheckpointError is a checkpoint that does not hold: its signature, or the
// log it is checked against. Reason is one of the Reason* words.
type CheckpointError struct {
	Source string
	Reason string
	Detail string
}

func (e *CheckpointError) Error() string {
	return fmt.Sprintf("checkpoint %s: %s (%s)", e.Source, e.Reason, e.Detail)
}

// ParseCheckpoints reads one or more signed notes (a file `vigil audit
// checkpoint` printed, or a copy of audit.checkpoints) and checks each
// signature with pub. A note not signed by pub, or altered, is a
// *CheckpointError with ReasonBadSignature; text that is not a checkpoint at
// all is a plain error.
func ParseCheckpoints(source string, data []byte, pub ed25519.PublicKey) ([]Checkpoint, error) {
	notes := splitNotes(data)
	if len(notes) == 0 {
		return nil, fmt.Errorf("checkpoint %s: no signed note in it", source)
	}
	var out []Checkpoint
	for i, msg := range notes {
		where := source
		if len(notes) > 1 {
			where = fmt.Sprintf("%s (note %d)", source, i+1)
		}
		origin, _, _ := strings.Cut(string(msg), "\n")
		if !strings.HasPrefix(origin, OriginPrefix) {
			return nil, fmt.Errorf("checkpoint %s: origin line %q is not a Vigil audit log's", where, origin)
		}
		vkey, err := note.NewEd25519VerifierKey(origin, pub)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: origin %q: %w", where, origin, err)
		}
		v, err := note.NewVerifier(vkey)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", where, err)
		}
		n, err := note.Open(msg, note.VerifierList(v))
		var unverified *note.UnverifiedNoteError
		var invalid *note.InvalidSignatureError
		switch {
		case errors.As(err, &unverified):
			return nil, &CheckpointError{Source: where, Reason: ReasonBadSignature, Detail: "not signed by the operator key (signed by another key, or by none)"}
		case errors.As(err, &invalid):
			return nil, &CheckpointError{Source: where, Reason: ReasonBadSignature, Detail: "its signature does not match its text (altered)"}
		case err != nil:
			return nil, fmt.Errorf("checkpoint %s: not a signed note: %w", where, err)
		}
		cp, err := parseCheckpointText(n.Text)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", where, err)
		}
		cp.Source = where
		out = append(out, cp)
	}
	return out, nil
}

func parseCheckpointText(text string) (Checkpoint, error) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) < 3 {
		return Checkpoint{}, errors.New("a checkpoint has an origin, a size and a hash line")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 1 || strconv.FormatInt(size, 10) != lines[1] {
		return Checkpoint{}, fmt.Errorf("size line %q: must be a positive decimal number", lines[1])
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(lines[2])
	if err != nil || len(raw) != 32 {
		return Checkpoint{}, fmt.Errorf("hash line %q: must be 32 bytes in base64", lines[2])
	}
	return Checkpoint{Origin: lines[0], Size: size, Hash: hex.EncodeToString(raw)}, nil
}

// splitNotes cuts concatenated signed notes apart: a note is text lines, a
// blank line, then signature lines ("— name sig"); the first line after them
// that is not a signature starts the next note. Blank lines between notes are
// skipped.
func splitNotes(data []byte) [][]byte {
	var out [][]byte
	var cur []byte
	inSigs := false
	flush := func() {
		if len(cur) > 0 {
			out = append(out, cur)
		}
		cur, inSigs = nil, false
	}
	for _, ln := range bytes.SplitAfter(data, []byte("\n")) {
		if len(ln) == 0 {
			continue
		}
		blank := len(bytes.TrimRight(ln, "\r\n")) == 0
		if inSigs {
			if bytes.HasPrefix(ln, []byte("— ")) {
				cur = append(cur, ln...)
				continue
			}
			flush()
		}
		if blank && len(cur) == 0 {
			continue
		}
		cur = append(cur, ln...)
		if blank {
			inSigs = true
		}
	}
	flush()
	return out
}

// LoadKey reads the operator's Ed25519 private key (PKCS#8 PEM, as `vigil
// keys init` writes it).
func LoadKey(path string) (ed25519.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("%s: not a PEM \"PRIVATE KEY\" block", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: not an Ed25519 key", path)
	}
	return ek, nil
}

// LoadPublicKey reads an Ed25519 public key (PKIX PEM).
func LoadPublicKey(path string) (ed25519.PublicKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, fmt.Errorf("%s: not a PEM \"PUBLIC KEY\" block", path)
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ek, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%s: not an Ed25519 key", path)
	}
	return ek, nil
}

// isCheckpointEvent: decisions get a checkpoint of their own, so a copy of
// audit.checkpoints taken after a decision anchors it.
func isCheckpointEvent(e Entry) bool {
	switch e.Event {
	case EventApproved, EventDenied, EventSealed:
		return true
	}
	return (e.Seq+1)%checkpointEvery == 0
}

// maybeCheckpoint runs under the append lock, after e is durable: it must
// never fail the append, so what goes wrong goes to Warn.
func (l *Log) maybeCheckpoint(e Entry) {
	if !isCheckpointEvent(e) {
		return
	}
	if err := l.writeCheckpoint(e); err != nil && l.Warn != nil {
		l.Warn(fmt.Errorf("audit: checkpoint after #%d: %w", e.Seq, err))
	}
}

func (l *Log) writeCheckpoint(e Entry) error {
	key, err := LoadKey(l.KeyFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil // no operator key yet: nothing to sign with
	}
	if err != nil {
		return err
	}
	first, err := firstEntry(l.path)
	if err != nil {
		return err
	}
	msg, err := SignCheckpoint(Checkpoint{Origin: Origin(first.Hash), Size: e.Seq + 1, Hash: e.Hash}, key)
	if err != nil {
		return err
	}
	f, err := openFile(CheckpointsPath(l.path), os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	// a note cut short by a crash must not swallow this one
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, st.Size()-1); err == nil && b[0] != '\n' {
			msg = append([]byte("\n\n"), msg...)
		}
	}
	if _, err := f.Write(msg); err != nil {
		return err
	}
	return f.Sync()
}

// firstEntry reads entry #0 (its line only).
func firstEntry(path string) (Entry, error) {
	f, err := open(path)
	if err != nil {
		return Entry{}, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	line, err := r.ReadBytes('\n')
	if err != nil {
		return Entry{}, fmt.Errorf("first entry: %w", err)
	}
	return parseLine(line[:len(line)-1])
}

// LocalCheckpoints reads the checkpoints Append wrote beside the log at
// logPath (audit.checkpoints), in the file's order, checking each note's
// signature with pub (a note not signed by it is a *CheckpointError). A
// missing file is no checkpoints. A last note cut short by a crash while it
// was written (the file does not end with a signature line) is left out and
// torn says so: what it would have anchored is durable in the log anyway.
func LocalCheckpoints(logPath string, pub ed25519.PublicKey) (cps []Checkpoint, torn bool, err error) {
	path := CheckpointsPath(logPath)
	f, err := open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, false, err
	}
	notes := splitNotes(data)
	for i, msg := range notes {
		where := fmt.Sprintf("%s (note %d)", path, i+1)
		got, err := ParseCheckpoints(where, msg, pub)
		if err != nil {
			if i == len(notes)-1 && !endsWithSignature(data) {
				return cps, true, nil
			}
			return nil, false, err
		}
		cps = append(cps, got...)
	}
	return cps, false, nil
}

// endsWithSignature: the file's last line is a whole signature line.
func endsWithSignature(data []byte) bool {
	if !bytes.HasSuffix(data, []byte("\n")) {
		return false
	}
	body := data[:len(data)-1]
	return bytes.HasPrefix(body[bytes.LastIndexByte(body, '\n')+1:], []byte("— "))
}
