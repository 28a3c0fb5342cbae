//go:build unix

package ui

import "syscall"

// hasJobControl reports whether the shell that started Vigil can resume it
// after ctrl+z. A job-control shell puts each job in a process group of its
// own; a parent without job control (sh -c, a launcher, an editor's
// terminal) leaves Vigil in the parent's group, and a stopped Vigil would
// then never be continued: the screen would freeze.
func hasJobControl() bool {
	pg := syscall.Getpgrp()
	ppg, err := syscall.Getpgid(syscall.Getppid())
	return err == nil && pg != ppg
}
