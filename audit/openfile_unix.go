//go:build unix

package audit

import "syscall"

const nonblock = syscall.O_NONBLOCK
