package search

// Span is one match within a line: 0-based byte offsets into the raw line.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Event is one element of matches[] (FR-LS-04): a match line or a context
// line. Column and MatchText describe the line's first match; Submatches
// (an extension) lists the line's matches, the first maxSubmatches of
// them: SubmatchesTruncated says there were more.
type Event struct {
	Type                string // "match" or "context"
	Path                string // relative to the order root, NFC, forward slashes
	LineNumber          uint64
	Column              uint64 // 1-based byte column; 0 for context
	Line                string // lossy UTF-8, no line terminator
	MatchText           string
	Submatches          []Span
	SubmatchesTruncated bool
	// A line longer than [tools.search] max_line_bytes is cut (linecut.go):
	// LineBytes is then the whole line's length and TextOffset where Line
	// starts in it (both 0 for a line shown whole). Column stays the first
	// match's column in the whole line; Submatches are offsets into Line,
	// only the matches that start within it (SubmatchesTruncated says some
	// were left out), and MatchText is the part of the first match within
	// it (MatchTextTruncated says it went on).
	TextOffset         int
	LineBytes          int
	MatchTextTruncated bool
}

// Cut reports whether Line is a window of a longer line.
func (ev *Event) Cut() bool { return ev.LineBytes > 0 }

// FileError is one per-file failure (FR-LS-ERR-06).
type FileError struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// Response is FR-LS-05's response object.
type Response struct {
	Pattern      string
	Path         string
	Count        int
	Matches      []Event
	Truncated    bool
	TimedOut     bool
	FilesScanned int64
	Errors       []FileError
	ExitCode     *int
	Stderr       string
	Content      string
}

// Batch is what Run streams: events (in final order, continuing where the
// previous batch stopped) and per-file errors found meanwhile.
type Batch struct {
	Offset       int // index in matches[] of Events[0]
	Events       []Event
	Errors       []FileError
	FilesScanned int64 // so far
}

// maxSubmatches caps the spans kept per matching line. A minified file is
// one long line: "a" in a 2 MB bundle (the default size cap) is two
// million matches, whose spans cost 32 bytes each to hold and about as
// much again to print, and took Vigil to 780 MB. The first thousand are
// more than a screen can highlight; the event says when there were more
// (Event.SubmatchesTruncated). column and match_text describe the first
// match, which is always kept.
const maxSubmatches = 1000
