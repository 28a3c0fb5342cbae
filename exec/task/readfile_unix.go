//go:build unix

package task

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openStored opens path without following a final symlink and without
// blocking on a FIFO.
func openStored(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w: a symlink", ErrNotAFile)}
	}
	return f, err
}
