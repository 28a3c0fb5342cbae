// Package fswatch turns fsnotify events in one folder into coalesced
// "something changed" signals, keeping the names of the files that changed.
// It is the one place Vigil watches the disk; the audit follower and the
// approval queue's change feed are built on it.
package fswatch

import (
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// maxNames bounds the names kept between takes; past it the watcher reports
// that it lost count, as it does when fsnotify overflows.
const maxNames = 4096

// Watcher signals changes in one folder. A burst of writes becomes one
// signal, so a busy writer never floods a reader; the names that changed are
// kept (once each) for a reader that reloads only those.
type Watcher struct {
	w       *fsnotify.Watcher
	changed chan struct{}
	done    chan struct{}

	mu    sync.Mutex
	names map[string]bool // changed since the last Take
	lost  bool            // fsnotify dropped events: the names are not all
}

// Watch starts watching dir (created 0700 if missing). names, when given,
// limit the signals to those files' events.
func Watch(dir string, names ...string) (*Watcher, error) {
	only := map[string]bool{}
	for _, n := range names {
		only[n] = true
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := fw.Add(dir); err != nil {
		fw.Close()
		return nil, err
	}
	w := &Watcher{w: fw, changed: make(chan struct{}, 1), done: make(chan struct{})}
	go w.run(only)
	return w, nil
}

func (w *Watcher) run(only map[string]bool) {
	// closing changed releases every reader, whichever channel ends first
	defer close(w.done)
	defer close(w.changed)
	for {
		select {
		case ev, ok := <-w.w.Events:
			if !ok {
				return
			}
			name := filepath.Base(ev.Name)
			if len(only) > 0 && !only[name] {
				continue
			}
			w.note(name, false)
		case _, ok := <-w.w.Errors:
			if !ok {
				return
			}
			// an overflow (or any error) loses events: say so
			w.note("", true)
		}
	}
}

func (w *Watcher) note(name string, lost bool) {
	w.mu.Lock()
	if w.names == nil {
		w.names = map[string]bool{}
	}
	if lost || len(w.names) >= maxNames {
		w.lost = true
	} else {
		w.names[name] = true
	}
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default: // a signal is already pending
	}
}

// C delivers a value after changes; one value stands for every change since
// the last. It is closed when the watcher ends.
func (w *Watcher) C() <-chan struct{} { return w.changed }

// Take returns and forgets the names changed since the last call, sorted;
// lost is true when some changes could not be named (the reader reloads
// everything).
func (w *Watcher) Take() (names []string, lost bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for n := range w.names {
		names = append(names, n)
	}
	slices.Sort(names)
	lost, w.names, w.lost = w.lost, nil, false
	return names, lost
}

// Close stops watching and waits until C is closed.
func (w *Watcher) Close() error {
	if w == nil {
		return nil
	}
	err := w.w.Close()
	<-w.done
	return err
}
