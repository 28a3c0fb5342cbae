package panes

import (
	"os"
	"path/filepath"
	"slices"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/fsnotify/fsnotify"
)

// Watcher turns fsnotify events under a folder into coalesced "something
// changed" signals a pane waits on with a tea.Cmd. A burst of writes becomes
// one signal, so a busy writer never floods the UI; the names of the files
// that changed are kept (once each) for a pane that reloads only those.
type Watcher struct {
	w       *fsnotify.Watcher
	changed chan struct{}

	mu    sync.Mutex
	names map[string]bool // changed since the last delivery
	over  bool            // fsnotify dropped events: the names are not all
}

// maxNames bounds the names kept between deliveries; past it the watcher
// reports that it lost count, as it does when fsnotify overflows.
const maxNames = 4096

// Watch starts watching dir (created if missing). names, when given and not
// empty, limit the signals to those files' events.
func Watch(dir string, names ...string) (*Watcher, error) {
	only := map[string]bool{}
	for _, n := range names {
		if n == "" {
			only = nil // every file
			break
		}
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
	w := &Watcher{w: fw, changed: make(chan struct{}, 1)}
	go func() {
		// closing changed releases every pending Wait, whichever channel ends first
		defer close(w.changed)
		for {
			select {
			case ev, ok := <-fw.Events:
				if !ok {
					return
				}
				name := filepath.Base(ev.Name)
				if len(only) > 0 && !only[name] {
					continue
				}
				w.note(name, false)
				select {
				case w.changed <- struct{}{}:
				default: // a signal is already pending
				}
			case _, ok := <-fw.Errors:
				if !ok {
					return
				}
				// an overflow (or any error) loses events: say so, once
				w.note("", true)
				select {
				case w.changed <- struct{}{}:
				default:
				}
			}
		}
	}()
	return w, nil
}

func (w *Watcher) note(name string, lost bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.names == nil {
		w.names = map[string]bool{}
	}
	switch {
	case lost || len(w.names) >= maxNames:
		w.over = true
	default:
		w.names[name] = true
	}
}

// take returns and forgets the names changed since the last call, sorted;
// all is true when some changes could not be named (the caller reloads
// everything).
func (w *Watcher) take() (names []string, all bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for n := range w.names {
		names = append(names, n)
	}
	slices.Sort(names)
	all, w.names, w.over = w.over, nil, false
	return names, all
}

// WaitNames returns a command that, at the next change, delivers what fn
// makes of the names of the files changed since the last delivery (all:
// events were lost, so they are not all named). Re-issue it after handling
// the message.
func (w *Watcher) WaitNames(fn func(names []string, all bool) tea.Msg) tea.Cmd {
	if w == nil {
		return nil
	}
	return func() tea.Msg {
		if _, ok := <-w.changed; !ok {
			return nil
		}
		return fn(w.take())
	}
}

// Wait returns a command that delivers msg at the next change. Re-issue it
// after handling msg.
func (w *Watcher) Wait(msg tea.Msg) tea.Cmd {
	if w == nil {
		return nil
	}
	return func() tea.Msg {
		if _, ok := <-w.changed; !ok {
			return nil
		}
		w.take() // the names are not wanted: forget them
		return msg
	}
}

// Close stops watching.
func (w *Watcher) Close() error {
	if w == nil {
		return nil
	}
	return w.w.Close()
}
