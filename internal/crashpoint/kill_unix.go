//go:build unix

package crashpoint

import (
	"os"
	"syscall"
)

func kill() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way; never return into the next write
}
