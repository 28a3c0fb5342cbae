package fswatch

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func waitSignal(t *testing.T, w *Watcher) {
	t.Helper()
	select {
	case _, ok := <-w.C():
		if !ok {
			t.Fatal("the watcher ended")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no signal")
	}
}

func TestWatchNamesTheFilesThatChanged(t *testing.T) {
	dir := t.TempDir()
	w, err := Watch(dir, "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, n := range []string{"ignored", "b", "a", "b"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for deadline := time.Now().Add(10 * time.Second); !slices.Equal(got, []string{"a", "b"}); {
		if time.Now().After(deadline) {
			t.Fatalf("names %v, want [a b]", got)
		}
		waitSignal(t, w)
		names, lost := w.Take()
		if lost {
			t.Fatal("events reported lost")
		}
		got = slices.Compact(slices.Sorted(slices.Values(append(got, names...))))
		if slices.Contains(got, "ignored") {
			t.Fatal("a file outside the names was reported")
		}
	}
}

func TestWatchCreatesTheFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "inbox")
	w, err := Watch(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := os.WriteFile(filepath.Join(dir, "m"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, w)
	if names, _ := w.Take(); !slices.Contains(names, "m") {
		t.Fatalf("names %v", names)
	}
}

func TestCloseEndsTheSignals(t *testing.T) {
	w, err := Watch(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-w.C(); ok {
		t.Fatal("C still open after Close returned")
	}
}
