//go:build !linux

package rules

import (
	"os"
	"time"
)

// statGen is the generation file's identity off Linux, without an
// inode: its mtime and size, and the file's content when it was
// written within ReloadWindow.
func statGen(path string) genStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return genStamp{}
	}
	return genStamp{size: uint64(fi.Size()), mtime: fi.ModTime().UnixNano(), exists: true,
		recentAtCheck: time.Since(fi.ModTime()) < ReloadWindow}
}
