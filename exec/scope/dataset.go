package scope

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/task"
)

// A dataset is a CSV file with a header row (.csv) or JSON Lines, one object
// a line (.jsonl, .ndjson). Every string field is matched, in column order
// (CSV: header order; JSON Lines: the order of keys in the line; numbers,
// booleans, nulls and nested values are not strings and are not matched).
// match_field is the column name, id the primary-key value.
//
// Primary-key order: keys that are base-10 integers fitting in 64 bits sort
// numerically, before all other keys, which sort by code point; equal keys
// keep file order. Numeric first means "2" precedes "10" in an id column,
// which is what a person expects of ids; a column mixing both still has one
// total order. Without a primary_key the key is the 1-based data row number
// (so file order), and that number is the id.
//
// A malformed record (a CSV row with the wrong number of fields, a line that
// is not a JSON object, a record without its primary key) fails the search
// with EXECUTION_FAILED naming the line: a dataset is meant to be regular.

// record is one dataset row handed to a visitor: its key, id and fields.
type record struct {
	key    cand
	id     string
	names  []string
	values []string
	line   int
}

func datasetFormat(sc config.ScopeConfig) (string, error) {
	switch strings.ToLower(filepath.Ext(sc.Path)) {
	case ".csv":
		return "csv", nil
	case ".jsonl", ".ndjson":
		return "jsonl", nil
	}
	return "", task.Errorf(task.ScopeUnavailable, "scope %q: %s is neither .csv nor .jsonl/.ndjson", sc.Name, sc.Path)
}

func searchDataset(r *run, sc config.ScopeConfig) error {
	return walkDataset(r, sc, func(rec *record) error {
		return r.matchFields(rec.key, rec.id, rec.names, rec.values, "", func(h *Hit) { h.Summary = recordSummary(rec) })
	})
}

// walkDataset opens a dataset scope and calls visit for each record in file
// order. rec and its slices are reused between calls.
func walkDataset(r *run, sc config.ScopeConfig, visit func(*record) error) error {
	fi, err := statScope(sc)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return task.Errorf(task.ScopeUnavailable, "scope %q: path %s is not a regular file", sc.Name, sc.Path)
	}
	format, err := datasetFormat(sc)
	if err != nil {
		return err
	}
	f, err := os.Open(sc.Path)
	if err != nil {
		return task.Errorf(task.ScopeUnavailable, "scope %q: %v", sc.Name, unwrapPath(err))
	}
	defer f.Close()
	// Buffers of fixed size (bufio, csv) are charged once.
	const bufCharge = 128 << 10
	if err := r.mem.grow(bufCharge); err != nil {
		return err
	}
	defer r.mem.release(bufCharge)
	g := &guard{r: f, mem: &r.mem}
	if format == "csv" {
		return walkCSV(r, sc, g, visit)
	}
	return walkJSONL(r, sc, g, visit)
}

// guard charges the bytes read for the record being parsed, so a record (a
// CSV field with no closing quote, a line with no newline) cannot grow past
// the memory budget. reset releases the charge once a record is done.
type guard struct {
	r    io.Reader
	mem  *budget
	held int64
}

var errRecordTooBig = errors.New("record over the memory budget")

func (g *guard) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if gerr := g.mem.grow(int64(n)); gerr != nil {
		return 0, errRecordTooBig
	}
	g.held += int64(n)
	return n, err
}

func (g *guard) reset() { g.mem.release(g.held); g.held = 0 }

// pkKey builds the sort key of a primary-key value.
func pkKey(v string, row int) cand {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return cand{class: 0, num: n, str: v, seq: int64(row)}
	}
	return cand{class: 1, str: v, seq: int64(row)}
}

func datasetErr(sc config.ScopeConfig, err error) error {
	if errors.Is(err, errRecordTooBig) {
		return task.Errorf(task.ResourceExhausted, "memory: a record of %s is larger than the memory budget; no partial results", sc.Path)
	}
	var te *task.Error
	if errors.As(err, &te) {
		return te
	}
	return task.Errorf(task.ExecutionFailed, "scope %q: %s: %v", sc.Name, sc.Path, err)
}

func walkCSV(r *run, sc config.ScopeConfig, g *guard, visit func(*record) error) error {
	cr := csv.NewReader(g)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil // an empty file has no records
	}
	if err != nil {
		return datasetErr(sc, err)
	}
	names := make([]string, len(header))
	for i, h := range header {
		names[i] = clean(h)
	}
	names[0] = strings.TrimPrefix(names[0], "\uFEFF") // a byte-order mark is not part of the name
	pk := -1
	seen := map[string]bool{}
	for i, n := range names {
		if seen[n] {
			return task.Errorf(task.ScopeUnavailable, "scope %q: %s: column %q appears twice in the header", sc.Name, sc.Path, n)
		}
		seen[n] = true
		if sc.PrimaryKey != "" && n == sc.PrimaryKey {
			pk = i
		}
	}
	if sc.PrimaryKey != "" && pk < 0 {
		return task.Errorf(task.ScopeUnavailable, "scope %q: primary_key %q is not a column of %s", sc.Name, sc.PrimaryKey, sc.Path)
	}
	g.reset()
	rec := &record{names: names, values: make([]string, len(names))}
	for row := 1; ; row++ {
		if err := r.tick(); err != nil {
			return err
		}
		fields, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return datasetErr(sc, err)
		}
		for i, v := range fields {
			rec.values[i] = clean(v)
		}
		rec.line, _ = cr.FieldPos(0)
		if pk >= 0 {
			rec.id = rec.values[pk]
			rec.key = pkKey(rec.id, row)
		} else {
			rec.id = strconv.Itoa(row)
			rec.key = cand{num: int64(row), seq: int64(row)}
		}
		err = visit(rec)
		g.reset()
		if err != nil {
			return err
		}
	}
}

func walkJSONL(r *run, sc config.ScopeConfig, g *guard, visit func(*record) error) error {
	br := bufio.NewReaderSize(g, 64<<10)
	rec := &record{}
	var line []byte
	row := 0
	for lineNo := 1; ; lineNo++ {
		if err := r.tick(); err != nil {
			return err
		}
		line = line[:0]
		var rerr error
		for {
			var chunk []byte
			chunk, rerr = br.ReadSlice('\n')
			line = append(line, chunk...)
			if rerr != bufio.ErrBufferFull {
				break
			}
		}
		if rerr != nil && rerr != io.EOF {
			return datasetErr(sc, rerr)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			row++
			if err := parseJSONLine(sc, line, lineNo, row, rec); err != nil {
				return err
			}
			if err := visit(rec); err != nil {
				return err
			}
		}
		g.reset()
		if rerr == io.EOF {
			return nil
		}
	}
}

// parseJSONLine fills rec from one JSON Lines object, keeping key order.
func parseJSONLine(sc config.ScopeConfig, line []byte, lineNo, row int, rec *record) error {
	bad := func(format string, args ...any) error {
		return task.Errorf(task.ExecutionFailed, "scope %q: %s line %d: "+format, append([]any{sc.Name, sc.Path, lineNo}, args...)...)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return bad("not a JSON object")
	}
	rec.names, rec.values = rec.names[:0], rec.values[:0]
	rec.line = lineNo
	pk, havePK := "", false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return bad("%v", err)
		}
		name := clean(t.(string))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return bad("%v", err)
		}
		var s string
		isString := len(raw) > 0 && raw[0] == '"'
		if isString {
			if err := json.Unmarshal(raw, &s); err != nil {
				return bad("%v", err)
			}
			rec.names = append(rec.names, name)
			rec.values = append(rec.values, s)
		}
		if sc.PrimaryKey != "" && name == sc.PrimaryKey {
			switch {
			case isString:
				pk, havePK = s, true
			case len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')):
				pk, havePK = string(raw), true
			default:
				return bad("primary key %q must be a string or a number, got %s", sc.PrimaryKey, raw)
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return bad("%v", err)
	}
	if dec.More() {
		return bad("more than one JSON value on the line")
	}
	switch {
	case sc.PrimaryKey == "":
		rec.id = strconv.Itoa(row)
		rec.key = cand{num: int64(row), seq: int64(row)}
	case !havePK:
		return bad("primary key %q is missing", sc.PrimaryKey)
	default:
		rec.id = pk
		rec.key = pkKey(pk, row)
	}
	return nil
}

// summaryColumns is how many columns a record's Summary shows.
const summaryColumns = 3

// recordSummary is a record's first columns other than its id, as
// "name: value · name: value", each value clipped: enough to tell records
// apart in a list, the record itself is in the preview.
func recordSummary(rec *record) string {
	var parts []string
	for i, name := range rec.names {
		if len(parts) == summaryColumns {
			break
		}
		if rec.values[i] == rec.id || strings.TrimSpace(rec.values[i]) == "" {
			continue
		}
		parts = append(parts, name+": "+clip(rec.values[i], labelMax/2))
	}
	return strings.Join(parts, " · ")
}
