package auditpane

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync/atomic"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/safetext"
)

// row is what the table shows of one line of the log. Rows are built only for
// the lines on screen (and a small cache around them), never for the whole log.
type row struct {
	time    string
	actor   string
	event   string
	task    string
	target  string
	outcome string
	bad     bool
}

// hay is what the fuzzy filter searches: the shown columns joined by spaces.
func (r row) hay() string {
	return strings.Join([]string{r.time, r.actor, r.event, r.task, r.target, r.outcome}, " ")
}

func newRow(e audit.Entry, bad bool) row {
	// fields come from the file: controls and invisible characters show as escapes
	r := row{time: shown(e.Time), actor: shown(e.Actor), event: shown(e.Event),
		task: shown(e.TaskID), target: shown(e.Target), outcome: shown(e.Outcome()), bad: bad}
	if bad {
		r.event, r.outcome = damagedEvent, damagedOutcome
	}
	return r
}

const (
	damagedEvent   = "(damaged)"
	damagedOutcome = "damaged"
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
// package exports no single-line parser (only file readers), and the pane
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

// rowOf is the row for one raw line.
func rowOf(line []byte) row {
	e, ok := parseLine(line)
	return newRow(e, !ok)
}
