package memory

import (
	"context"
	"path/filepath"

	"github.com/vigil-dev/vigil/internal/fswatch"
)

// Changes follows the database file until ctx ends: a value arrives after
// any process (`vigil memory add`, an MCP add_memory, an import) wrote
// memories, and the channel closes when ctx ends or the watch fails.
// SQLite in WAL mode writes a commit to the -wal file and a checkpoint to
// the database file, so the feed watches those two names in their folder
// (never -shm, which readers touch). A burst of writes is one value, and a
// reader that is slow gets the values merged, so it never blocks a writer;
// the reader re-reads what it shows (a value says "something changed", not
// what). This Store's own writes are signalled too.
func (s *Store) Changes(ctx context.Context) (<-chan struct{}, error) {
	done, err := s.begin()
	if err != nil {
		return nil, err
	}
	base := filepath.Base(s.path)
	w, err := fswatch.Watch(filepath.Dir(s.path), base, base+"-wal")
	done()
	if err != nil {
		return nil, &CoreError{Msg: "Memory database cannot be watched", Err: err}
	}
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		defer w.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-w.C():
				if !ok {
					return
				}
				w.Take()
				select {
				case out <- struct{}{}:
				default: // a value is already waiting: it stands for this one too
				}
			}
		}
	}()
	return out, nil
}
