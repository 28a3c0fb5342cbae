package task

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotAFile is why ReadStored refused a path: it is a symlink, a FIFO, a
// device or anything else that is not a regular file, or it is larger than
// its kind of file can be.
var ErrNotAFile = errors.New("not a regular file of a plausible size")

// ReadStored reads a file Vigil wrote itself (a task's record or manifest, a
// stored result) without trusting what is at the path now: a symlink is
// refused rather than followed, a FIFO or device is refused without
// blocking (O_NONBLOCK, then fstat), and a file larger than max is refused
// without reading it. A missing file gives an error wrapping
// fs.ErrNotExist; a refused one an error wrapping ErrNotAFile.
func ReadStored(path string, max int64) ([]byte, error) {
	f, err := OpenStored(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: %d bytes, more than %d", ErrNotAFile, st.Size(), max)}
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: more than %d bytes", ErrNotAFile, max)}
	}
	return b, nil
}

// OpenStored opens path for reading only if it is a regular file: never
// through a symlink, never blocking on a FIFO. The caller bounds the read.
func OpenStored(path string) (*os.File, error) {
	f, err := openStored(path)
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
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: a %s", ErrNotAFile, kindOf(st.Mode()))}
	}
	return f, nil
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		return "device"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "special file"
}
