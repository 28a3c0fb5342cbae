package audit

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// errNotRegular: one of the log's files (audit.log, its head, its
// checkpoints) is a FIFO, a device or another thing that is not a regular
// file. Reading a FIFO would block every append for ever and a device like
// /dev/zero would stream without end, so neither is read.
var errNotRegular = errors.New("not a regular file")

// openFile is os.OpenFile for the log's own files: it never blocks on a FIFO
// (O_NONBLOCK where there is one) and refuses anything but a regular file.
// A symlink to a regular file is followed (a log may live elsewhere).
func openFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|nonblock, perm)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", errNotRegular, st.Mode().Type())}
	}
	return f, nil
}

// open opens a log file for reading (see openFile).
func open(path string) (*os.File, error) { return openFile(path, os.O_RDONLY, 0) }

// readSmall reads a file that is never large (the head): at most max bytes,
// else an error.
func readSmall(path string, max int64) ([]byte, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, max)
	}
	return b, nil
}
