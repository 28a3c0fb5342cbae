//go:build !unix

// Package flock takes advisory file locks (flock(2)) that serialise Vigil
// processes on one home; the kernel drops a lock when its process dies.
package flock

// Lock is a no-op where flock does not exist: in-process locks still hold,
// but two Vigil processes could race.
func Lock(string) (func(), error) { return func() {}, nil }

// Shared is a no-op where flock does not exist.
func Shared(string) func() { return nil }

// TryLock is a no-op lock where flock does not exist.
func TryLock(string) func() { return func() {} }
