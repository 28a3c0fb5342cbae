package search

import (
	"io"
	"os"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"
)

// Backends write their output to an in-memory file (memfd), not a pipe.
// Through a pipe, the backend's threads and Vigil's reader wake each other
// thousands of times per search (Vigil reads a few KiB at a time as it
// arrives); rg then spent ~20 ms more CPU on the Go tree's dense search,
// Vigil a similar amount, and both share the cores. A file takes the
// writes without waking anyone, and Vigil reads what has accumulated a
// few times per millisecond at most.

// startFollowed starts cmd with its output going to an in-memory file, and
// limits its memory (limitMemory, for files up to maxFileSize bytes). It
// returns a reader of that output, which ends once cmd has exited, and
// wait, which returns cmd.Wait's error once it has (call it once, after
// reading to the end). Where no in-memory file can be made (an old kernel,
// a sandbox that forbids memfd_create), the output goes through a pipe.
func startFollowed(cmd *exec.Cmd, maxFileSize int64) (r io.Reader, wait func() error, err error) {
	out, err := newOutputFile()
	if err != nil {
		pipe, err := cmd.StdoutPipe()
		if err != nil {
			return nil, nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, nil, err
		}
		limitMemory(cmd, maxFileSize)
		return pipe, cmd.Wait, nil
	}
	cmd.Stdout = out
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, nil, err
	}
	limitMemory(cmd, maxFileSize)
	exited := make(chan struct{})
	var werr error
	go func() {
		werr = cmd.Wait()
		close(exited)
	}()
	wait = func() error {
		<-exited
		out.Close()
		return werr
	}
	return &followReader{f: out, done: exited}, wait, nil
}

// followPoll is how long the reader waits when it has caught up with the
// writer.
const followPoll = 500 * time.Microsecond

// followPunch is how much read output the reader lets accumulate before
// freeing it (the file lives in memory; a pipe would bound it).
const followPunch = 4 << 20

// newOutputFile makes the in-memory file a backend writes to (a variable
// so that tests can take it away).
var newOutputFile = func() (*os.File, error) {
	fd, err := unix.MemfdCreate("vigil-rg-output", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "vigil-rg-output"), nil
}

// followReader reads a file that another process is still writing, like
// tail -f, until that process has exited (done is closed) and everything
// it wrote has been read; then io.EOF.
type followReader struct {
	f       *os.File
	done    <-chan struct{}
	read    int64 // bytes read so far
	punched int64 // bytes freed so far (from the start)
	timer   *time.Timer
}

func (r *followReader) Read(p []byte) (int, error) {
	for {
		// ReadAt (pread): the writer's descriptor shares the file offset.
		n, err := r.f.ReadAt(p, r.read)
		if n > 0 {
			r.read += int64(n)
			if r.read-r.punched >= followPunch {
				// Free what was read: the writer's offset is unaffected.
				upTo := r.read &^ (1<<16 - 1)
				if unix.Fallocate(int(r.f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, upTo) == nil {
					r.punched = upTo
				}
			}
			return n, nil
		}
		if err != nil && err != io.EOF {
			return 0, err
		}
		select {
		case <-r.done:
			// The writer has exited, so all it wrote is in the file: one
			// more read tells whether anything came after the last one.
			n, err := r.f.ReadAt(p, r.read)
			r.read += int64(n)
			if n > 0 {
				return n, nil
			}
			if err != nil && err != io.EOF {
				return 0, err
			}
			return 0, io.EOF
		default:
		}
		if r.timer == nil {
			r.timer = time.NewTimer(followPoll)
		} else {
			r.timer.Reset(followPoll)
		}
		select {
		case <-r.done:
		case <-r.timer.C:
		}
	}
}
