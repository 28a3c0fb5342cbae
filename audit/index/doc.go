// Package index is the audit log read the way a viewer needs it: an index of
// line starts, rows parsed only for the lines shown, a filter that judges
// raw lines, and the glue that keeps a verified chain current as lines are
// appended. The Audit pane (panes/audit) renders what it finds; nothing here
// knows about a terminal.
//
//   - Scan and Extend find where lines start, reading bytes only (no line is
//     parsed), and note the event names met on the way.
//   - Row is what a viewer shows of a line (RowOf parses one line).
//   - Filter is what rows are filtered by; its exact part is audit.Query,
//     which `vigil audit show` selects entries with. LineFilter judges raw
//     lines, parsing only those the byte scan (the prefilter and readHead)
//     cannot decide; Pass runs it over a large log in the background, one
//     pass at a time.
//   - Verify verifies the log through audit.VerifyIncremental and returns a
//     Mark; ReadAppended extends the chain by appended lines while the Mark
//     says the log is the same file with lines only added (a rewrite inside
//     the verified prefix, an edit in place, a cut or a replacement all
//     send the viewer back to Verify). Seen catches a log cut or replaced
//     together with its head.
package index
