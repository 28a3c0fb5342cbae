//go:build !unix

package task

import (
	"fmt"
	"io/fs"
	"os"
)

// openStored refuses a symlink (checked first: no O_NOFOLLOW here).
func openStored(path string) (*os.File, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w: a symlink", ErrNotAFile)}
	}
	return os.Open(path)
}
