//go:build linux

package rules

import (
	"syscall"
	"time"
)

// statGen is the generation file's identity, read with one stat(2) and no
// allocation (Decide pays it on every decision): an atomic rewrite changes
// the inode, and mtime and size usually too.
func statGen(path string) genStamp {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return genStamp{}
	}
	mtime := time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec))
	return genStamp{ino: uint64(st.Ino), size: uint64(st.Size), mtime: mtime.UnixNano(), exists: true,
		recentAtCheck: time.Since(mtime) < ReloadWindow}
}
