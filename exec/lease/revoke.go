package lease

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// maxRevokedBytes bounds the revocation file so a huge file cannot stall checks.
const maxRevokedBytes = 16 << 20

// revocationList is the set of revoked jti values, re-read whenever the file
// changes. Each check stats the file and reloads when its identity, size or
// modification time differ from what was loaded: that sees edits by any
// process (a revoke from another terminal) without a watcher goroutine, and a
// check never uses a list older than the file it just looked at.
type revocationList struct {
	path string

	mu     sync.Mutex
	loaded bool
	info   os.FileInfo
	mtime  time.Time
	size   int64
	// loadedAt is when the file was read (file-system time, not the lease
	// clock). A file modified within a timestamp tick of that read could
	// change again without its mtime moving, so such a "racy" load is
	// repeated on the next check, as git does for its index.
	loadedAt time.Time
	jtis     map[string]bool
}

func (r *revocationList) contains(jti string) (bool, error) {
	if r.path == "" {
		return false, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fi, err := os.Stat(r.path)
	if errors.Is(err, os.ErrNotExist) {
		r.loaded, r.info, r.jtis = true, nil, nil
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !r.loaded || r.info == nil || !os.SameFile(fi, r.info) || !fi.ModTime().Equal(r.mtime) || fi.Size() != r.size ||
		r.loadedAt.Before(r.mtime.Add(2*time.Second)) {
		if err := r.reload(); err != nil {
			return false, err
		}
	}
	return r.jtis[jti], nil
}

func (r *revocationList) reload() error {
	// O_NONBLOCK: a FIFO put in its place must not block every lease check
	f, err := os.OpenFile(r.path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		// a FIFO or a device (/dev/zero streams for ever): fail closed
		return fmt.Errorf("%s is not a regular file (%s)", r.path, fi.Mode().Type())
	}
	if fi.Size() > maxRevokedBytes {
		return fmt.Errorf("%s is larger than %d bytes", r.path, maxRevokedBytes)
	}
	data := make([]byte, 0, fi.Size())
	buf := bytes.NewBuffer(data)
	if _, err := buf.ReadFrom(io.LimitReader(f, maxRevokedBytes+1)); err != nil {
		return err
	}
	if buf.Len() > maxRevokedBytes {
		return fmt.Errorf("%s is larger than %d bytes", r.path, maxRevokedBytes)
	}
	jtis := map[string]bool{}
	sc := bufio.NewScanner(buf)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		jtis[line] = true
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", r.path, err)
	}
	r.loaded, r.info, r.mtime, r.size, r.jtis = true, fi, fi.ModTime(), fi.Size(), jtis
	r.loadedAt = time.Now()
	return nil
}
