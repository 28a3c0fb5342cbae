package searchpane

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/vigil-dev/vigil/internal/atomicfile"
)

// maxHistory bounds the history file so it never grows without end.
const maxHistory = 500

// historyMu serializes writers in this process; the file itself is replaced
// atomically, so a crash never leaves half a history.
var historyMu sync.Mutex

// LoadHistory reads the query history at path, oldest first. A missing file
// is an empty history. Each line is a Go-quoted string so any query survives.
func LoadHistory(path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		q, err := strconv.Unquote(line)
		if err != nil {
			q = line // hand-written plain lines are accepted as they are
		}
		if q != "" {
			out = append(out, q)
		}
	}
	return out, sc.Err()
}

// AppendHistory adds query to the history at path (moving an earlier copy to
// the end) and rewrites the file atomically. The demo seeds its example query
// with it.
func AppendHistory(path, query string) error {
	if path == "" {
		return errors.New("history: path must not be empty")
	}
	if strings.TrimSpace(query) == "" {
		return errors.New("history: query must not be empty")
	}
	historyMu.Lock()
	defer historyMu.Unlock()
	hist, err := LoadHistory(path)
	if err != nil {
		return err
	}
	return writeHistory(path, pushHistory(hist, query))
}

func pushHistory(hist []string, q string) []string {
	out := make([]string, 0, len(hist)+1)
	for _, h := range hist {
		if h != q {
			out = append(out, h)
		}
	}
	out = append(out, q)
	if len(out) > maxHistory {
		out = out[len(out)-maxHistory:]
	}
	return out
}

func writeHistory(path string, hist []string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	var b bytes.Buffer
	for _, h := range hist {
		b.WriteString(strconv.Quote(h))
		b.WriteByte('\n')
	}
	return atomicfile.Write(path, b.Bytes(), 0o600)
}
