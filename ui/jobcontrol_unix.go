//go:build unix

package ui

import "golang.org/x/sys/unix"

// hasJobControl reports whether a shell that can resume Vigil after ctrl+z
// started it. A job-control shell leads its session and puts each job in a
// process group of its own. Vigil leading its own session (started by tmux
// or a terminal without a shell) or sharing its parent's group (sh -c, a
// launcher, an editor's terminal) has no one to send it SIGCONT: stopped,
// its screen would freeze until killed from elsewhere.
func hasJobControl() bool {
	pid := unix.Getpid()
	sid, err := unix.Getsid(0)
	if err != nil || sid == pid {
		return false
	}
	ppg, err := unix.Getpgid(unix.Getppid())
	return err == nil && unix.Getpgrp() != ppg
}
