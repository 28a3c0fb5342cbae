package flock

import (
	"path/filepath"
	"sync/atomic"
	"testing"
)

func TestLockExcludesAndShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l")
	if Shared(path) != nil {
		t.Fatal("Shared on a missing file must return nil")
	}
	unlock, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	// a second open file description is refused while the first holds it
	if u := TryLock(path); u != nil {
		u()
		t.Fatal("a second exclusive lock was granted while the first was held")
	}
	var got atomic.Bool
	done := make(chan struct{})
	go func() {
		u, err := Lock(path) // blocks until released
		if err == nil {
			got.Store(true)
			u()
		}
		close(done)
	}()
	unlock()
	<-done
	if !got.Load() {
		t.Fatal("the second lock was never granted")
	}
	s := Shared(path)
	if s == nil {
		t.Fatal("shared lock on an existing file failed")
	}
	s()
}
