package search

import (
	"context"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// A walking backend reads every file it selects, also those over
// max_file_size_bytes, which the ordered path never opens (it checks sizes
// first) and Vigil skips afterwards. A large generated file costs little
// (the Go tree has four over the default 2 MB cap, 10 MB in all); an
// 8 GiB image takes seconds. The walker could learn every file's size as
// it lists it, but that is a stat per file (13 ms of CPU on the Go tree,
// on a path that is all about CPU; rg's own --max-filesize costs it as
// much, and ugrep 3.11 has none). Instead, the files the backend has open
// are looked at while it runs: a file the backend is still reading a
// sample later is a large one, and one over the cap and over
// walkTooLargeBudget hands the search to the ordered path. Where /proc
// cannot show the backend's files, the walker learns sizes after all
// (tallyWalk's sizes, tooLargeUnfit).

// procFDDir is where Linux lists a process's open files (a variable so
// that tests can take it away).
var procFDDir = func(pid int) string { return "/proc/" + strconv.Itoa(pid) + "/fd" }

// hugeWatchEvery is how often the backend's open files are looked at:
// reading 16 MiB takes about that long.
const hugeWatchEvery = 10 * time.Millisecond

// hugeWatch is a running watch of a backend's open files.
type hugeWatch struct {
	found atomic.Bool // a file over the cap and the budget was open
	done  chan struct{}
}

// watchHugeFiles starts watching pid's open files until ctx ends or the
// process is gone, calling cancel once one is over max_file_size_bytes
// and walkTooLargeBudget. It returns nil when /proc cannot show them.
func (p *prepared) watchHugeFiles(ctx context.Context, pid int, cancel func()) *hugeWatch {
	dir := procFDDir(pid)
	if _, err := os.ReadDir(dir); err != nil {
		return nil
	}
	limit := max(p.e.maxSize, walkTooLargeBudget)
	if p.e.maxSize <= 0 {
		limit = -1 // no cap: nothing is skipped for its size
	}
	w := &hugeWatch{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(hugeWatchEvery)
		defer tick.Stop()
		for limit > 0 {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if openFileOver(dir, limit) {
				w.found.Store(true)
				cancel()
				return
			}
		}
	}()
	return w
}

// wait returns once the watch has stopped (its ctx must have ended).
func (w *hugeWatch) wait() {
	if w != nil {
		<-w.done
	}
}

// openFileOver reports whether a regular file open in the /proc fd
// directory dir is larger than limit bytes. Standard input, output and
// error are not looked at: the output is a growing memfd.
func openFileOver(dir string, limit int64) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false // the process is gone
	}
	for _, e := range ents {
		switch e.Name() {
		case "0", "1", "2":
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(dir+"/"+e.Name(), &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Size > limit {
			return true
		}
	}
	return false
}
