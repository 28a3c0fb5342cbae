//go:build !unix

package ui

// hasJobControl is false where there is no SIGTSTP to suspend with.
func hasJobControl() bool { return false }
