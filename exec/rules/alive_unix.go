//go:build unix

package rules

import (
	"errors"
	"syscall"
)

// processExists sends signal 0: EPERM means the process exists under
// another account.
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
