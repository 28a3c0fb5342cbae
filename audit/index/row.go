package index

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync/atomic"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/safetext"
)

// Row is what a viewer shows of one line of the log: the entry's columns as
// shown (controls and invisible characters escaped), or the damaged row of a
// line that is not a valid entry. A viewer builds rows only for the lines on
// screen (and a small cache around them), never for the whole log.
type Row struct {
	Time    string
	Actor   string
	Event   string // DamagedEvent on a damaged line
	Task    string
	Target  string
	Outcome string // DamagedOutcome on a damaged line
	Bad     bool   // the line is not a valid entry
}

// Hay is what the fuzzy filter searches: the shown columns joined by spaces.
func (r Row) Hay() string {
	return strings.Join([]string{r.Time, r.Actor, r.Event, r.Task, r.Target, r.Outcome}, " ")
}

// NewRow is the row of entry e; bad makes it the damaged row.
func NewRow(e audit.Entry, bad bool) Row {
	// fields come from the file: controls and invisible characters show as escapes
	r := Row{Time: shown(e.Time), Actor: shown(e.Actor), Event: shown(e.Event),
		Task: shown(e.TaskID), Target: shown(e.Target), Outcome: shown(e.Outcome()), Bad: bad}
	if bad {
		r.Event, r.Outcome = DamagedEvent, DamagedOutcome
	}
	return r
}

// A line that is not a valid entry shows these for its event and outcome
// (its other columns as far as they decode): the event filter offers
// DamagedEvent once the chain has found such a line.
const (
	DamagedEvent   = "(damaged)"
	DamagedOutcome = "damaged"
)

// shown is safetext.Line with a fast path for the common case (printable
// ASCII without a backslash, which it returns unchanged).
func shown(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '\\' {
			return safetext.Line(s)
		}
	}
	return s
}

// parseLine decodes one line of the log (without its newline) as the audit
// package's readers do: strictly, and valid only in canonical form. The audit
// package exports no single-line parser (only file readers), and a viewer
// reads the lines it shows by offset; TestParseLineAgreesWithAudit holds the
// two to the same answer on valid, edited, non-canonical and garbage lines.
func parseLine(line []byte) (audit.Entry, bool) {
	linesParsed.Add(1)
	var e audit.Entry
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || dec.More() {
		return e, false
	}
	again, err := e.Line()
	return e, err == nil && bytes.Equal(again, line)
}

// linesParsed counts parseLine's calls: the tests hold the byte scan to
// parsing only what it cannot decide.
var linesParsed atomic.Int64

// RowOf is the row for one raw line.
func RowOf(line []byte) Row {
	e, ok := parseLine(line)
	return NewRow(e, !ok)
}
