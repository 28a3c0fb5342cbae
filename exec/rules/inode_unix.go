//go:build unix

package rules

import (
	"os"
	"syscall"
)

// inode is the file's inode number: an atomic rewrite changes it.
func inode(fi os.FileInfo) uint64 {
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Ino)
	}
	return 0
}
