//go:build unix

// Package flock takes advisory file locks (flock(2)) that serialise Vigil
// processes on one home; the kernel drops a lock when its process dies.
package flock

import (
	"os"
	"syscall"
)

// Lock takes an exclusive lock on path (created 0600 if missing) and returns
// its release.
func Lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := flock(f, syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return release(f), nil
}

// Shared takes a shared lock on an existing path. It returns nil when the
// file does not exist or cannot be locked; the caller then goes without.
func Shared(path string) func() {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	if err := flock(f, syscall.LOCK_SH); err != nil {
		f.Close()
		return nil
	}
	return release(f)
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

func release(f *os.File) func() {
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}

// TryLock takes an exclusive lock on path (created if missing) without
// waiting; it returns nil when another process holds it.
func TryLock(path string) func() {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil
	}
	return release(f)
}
