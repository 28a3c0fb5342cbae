package panes

import (
	"os"
	"path/filepath"

	tea "charm.land/bubbletea/v2"
	"github.com/fsnotify/fsnotify"
)

// Watcher turns fsnotify events under a folder into coalesced "something
// changed" signals a pane waits on with a tea.Cmd. A burst of writes becomes
// one signal, so a busy writer never floods the UI.
type Watcher struct {
	w       *fsnotify.Watcher
	changed chan struct{}
}

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
				if len(only) > 0 && !only[filepath.Base(ev.Name)] {
					continue
				}
				select {
				case w.changed <- struct{}{}:
				default: // a signal is already pending
				}
			case _, ok := <-fw.Errors:
				if !ok {
					return
				}
			}
		}
	}()
	return w, nil
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
