package memory

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// MaxLineBytes bounds one JSONL line so a file without newlines cannot make
// the importer buffer it whole.
const MaxLineBytes = 4 << 20

// ImportError names the line that stopped an import. Nothing of the file was stored.
type ImportError struct {
	Line int
	Err  error
}

func (e *ImportError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *ImportError) Unwrap() error { return e.Err }

// importLine is one JSONL record of CLI.md.
type importLine struct {
	Text      *string         `json:"text"`
	Tags      json.RawMessage `json:"tags"`
	Source    json.RawMessage `json:"source"`
	CreatedAt json.RawMessage `json:"created_at"`
}

// Import reads JSON Lines from r and stores every record in one transaction:
// either the whole file is stored or, on the first bad line, nothing is. It
// streams (one line in memory at a time) and returns how many it stored.
// Blank lines are skipped.
func (s *Store) Import(ctx context.Context, r io.Reader) (int, error) {
	done, err := s.begin()
	if err != nil {
		return 0, err
	}
	defer done()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return 0, classify(err)
	}
	defer conn.Close()
	// A large cache keeps a big transaction's dirty pages in memory; the
	// pooled connection gets Open's cache back afterwards.
	if _, err := conn.ExecContext(ctx, `PRAGMA cache_size = -`+strconv.Itoa(importCacheKiB)); err != nil {
		return 0, classify(err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA cache_size = -`+strconv.Itoa(cacheKiB))
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, classify(err)
	}
	defer tx.Rollback() // no-op after Commit; undoes everything on any failure
	bulk, err := beginBulk(ctx, tx)
	if err != nil {
		return 0, classify(err)
	}
	ins, err := newBatchInserter(ctx, tx)
	if err != nil {
		return 0, classify(err)
	}

	first := ins.next
	n, line, err := s.importLines(ctx, bufio.NewReaderSize(r, 64<<10), ins)
	if err != nil {
		return 0, err
	}
	if err := ins.flush(ctx); err != nil {
		return 0, &ImportError{Line: line, Err: classify(err)}
	}
	if n == 0 {
		first = -1
	}
	if first >= 0 {
		if err := indexFrom(ctx, tx, first); err != nil {
			return 0, classify(err)
		}
	}
	if err := bulk.rebuild(ctx, tx); err != nil {
		return 0, classify(err)
	}
	if err := tx.Commit(); err != nil {
		return 0, classify(err)
	}
	return n, nil
}

// importLines adds each non-blank line of br to ins and returns how many
// it added and the number of the last line read. An error names the line
// (an *ImportError for a bad or unstorable record).
func (s *Store) importLines(ctx context.Context, br *bufio.Reader, ins *batchInserter) (n, line int, err error) {
	for {
		raw, err := readLine(br)
		if err == io.EOF && raw == nil {
			return n, line, nil
		}
		line++
		if err != nil && err != io.EOF {
			if errors.Is(err, errLineTooLong) {
				return 0, line, &ImportError{Line: line, Err: err}
			}
			return 0, line, fmt.Errorf("reading line %d: %w", line, err)
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		m, perr := parseImportLine(raw)
		if perr == nil {
			m, perr = s.normalise(m)
		}
		if perr != nil {
			return 0, line, &ImportError{Line: line, Err: perr}
		}
		if err := ins.add(ctx, m); err != nil {
			return 0, line, &ImportError{Line: line, Err: classify(err)}
		}
		n++
		if ctx.Err() != nil {
			return 0, line, ctx.Err()
		}
	}
}

var errLineTooLong = fmt.Errorf("line longer than %d bytes", MaxLineBytes)

// readLine returns the next line without its newline; the last line may lack one.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > MaxLineBytes+1 {
			// The import fails on this line anyway, so the rest is never read.
			return nil, errLineTooLong
		}
		switch {
		case err == nil:
			return bytes.TrimRight(buf, "\r\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			if len(buf) == 0 {
				return nil, io.EOF
			}
			return buf, nil
		default:
			return nil, err
		}
	}
}

func parseImportLine(raw []byte) (NewMemory, error) {
	var m NewMemory
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var l importLine
	if err := dec.Decode(&l); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return m, fmt.Errorf("%s: wrong type (%s)", ute.Field, ute.Value)
		}
		if strings.HasPrefix(err.Error(), "json: unknown field ") {
			return m, fmt.Errorf("%s: extra fields not permitted", strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`))
		}
		return m, fmt.Errorf("not a JSON object: %v", err)
	}
	if dec.More() {
		return m, errors.New("more than one JSON value on the line")
	}
	if l.Text == nil {
		return m, errors.New("text: field required")
	}
	m.Text = *l.Text
	if len(l.Tags) > 0 && !isNull(l.Tags) {
		if err := json.Unmarshal(l.Tags, &m.Tags); err != nil || bytes.TrimSpace(l.Tags)[0] != '[' {
			return m, errors.New("tags: value is not a valid list of strings")
		}
	}
	if len(l.Source) > 0 && !isNull(l.Source) {
		s, ok := jsonString(l.Source)
		if !ok {
			return m, errors.New("source: str type expected")
		}
		m.Source = s
	}
	if len(l.CreatedAt) > 0 && !isNull(l.CreatedAt) {
		s, ok := jsonString(l.CreatedAt)
		if !ok {
			return m, errors.New("created_at: str type expected")
		}
		t, err := ParseTime(s)
		if err != nil {
			return m, fmt.Errorf("created_at: %w", err)
		}
		m.CreatedAt = t
	}
	return m, nil
}

// ParseTime reads a memory's date: RFC 3339, or YYYY-MM-DD meaning midnight UTC.
func ParseTime(s string) (time.Time, error) {
	if dateRE.MatchString(s) {
		if t, err := time.Parse("2006-01-02", s); err == nil {
			return t, nil
		}
		return time.Time{}, errors.New("invalid date, expected a real calendar day YYYY-MM-DD")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, errors.New("invalid date format, expected RFC 3339 or YYYY-MM-DD")
	}
	return t.UTC(), nil
}
