package task

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/vigil-dev/vigil/internal/atomicfile"
	"github.com/vigil-dev/vigil/internal/crashpoint"
	"github.com/vigil-dev/vigil/internal/flock"
)

// Store keeps one signed result per task_id in a folder (results/), which
// makes task_id the idempotency key: a task runs at most once, across
// goroutines (a per-task mutex) and across Vigil processes (a per-task file
// lock), and a repeat gets the stored result.
type Store struct {
	dir string

	mu    sync.Mutex
	locks map[string]*taskLock
}

type taskLock struct {
	mu   sync.Mutex
	refs int
}

// ErrNotFound means no result is stored for a task_id.
var ErrNotFound = errors.New("no result stored for this task_id")

// ErrNotThisTask means a stored result answers another task, or another
// request under this task's id (copied or moved there): it is never
// served, nor adopted, as this task's answer, signed or not.
var ErrNotThisTask = errors.New("the stored result is not this task's")

// OpenStore uses dir (created private if missing) for results.
func OpenStore(dir string) (*Store, error) {
	if err := os.MkdirAll(filepath.Join(dir, ".locks"), 0o700); err != nil {
		return nil, fmt.Errorf("results folder: %w", err)
	}
	return &Store{dir: dir, locks: map[string]*taskLock{}}, nil
}

// Dir is the results folder.
func (s *Store) Dir() string { return s.dir }

// Path is where a task's result lives.
func (s *Store) Path(taskID string) string { return filepath.Join(s.dir, taskID+".json") }

// Load returns the stored result for taskID, or an error wrapping ErrNotFound
// (none stored) or ErrNotThisTask (the file names another task).
// It checks the shape but not the signature; callers that hand the result to
// someone else verify it.
func (s *Store) Load(taskID string) (*Result, error) {
	if err := ValidateTaskID(taskID); err != nil {
		return nil, err
	}
	data, err := ReadStored(s.Path(taskID), MaxResultBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("task %s: %w", taskID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", taskID, err)
	}
	r, err := ParseResult(data)
	if err != nil {
		return nil, fmt.Errorf("task %s: stored result: %w", taskID, err)
	}
	if r.TaskID != taskID {
		return nil, fmt.Errorf("task %s: %w: it names task %s", taskID, ErrNotThisTask, strconv.Quote(r.TaskID))
	}
	return r, nil
}

// Do runs run at most once per taskID. If a result is stored it is returned
// (fresh=false) without calling run, provided it answered the same request;
// a stored result for a different requestHash is refused with an
// EXECUTION_FAILED error and nothing runs. Otherwise run's result, which must
// carry taskID and requestHash and should already be signed, is stored
// atomically and returned with fresh=true. An error from run stores nothing.
func (s *Store) Do(taskID, requestHash string, run func() (*Result, error)) (res *Result, fresh bool, err error) {
	if err := ValidateTaskID(taskID); err != nil {
		return nil, false, err
	}
	unlock := s.lockLocal(taskID)
	defer unlock()
	unlockFile, err := flock.Lock(filepath.Join(s.dir, ".locks", taskID+".lock"))
	if err != nil {
		return nil, false, fmt.Errorf("task %s: lock: %w", taskID, err)
	}
	defer unlockFile()

	stored, err := s.Load(taskID)
	switch {
	case err == nil:
		if stored.RequestHash != requestHash {
			return nil, false, Errorf(ExecutionFailed,
				"task_id: %q was already executed with different inputs; use a new task_id", taskID)
		}
		return stored, false, nil
	case !errors.Is(err, ErrNotFound):
		return nil, false, err
	}

	r, err := run()
	if err != nil {
		return nil, false, err
	}
	crashpoint.Hit("result.ran") // the work is done (a device may have acted), nothing stored
	if r == nil || r.TaskID != taskID || r.RequestHash != requestHash {
		return nil, false, fmt.Errorf("task %s: result does not match the task (task_id or request_hash)", taskID)
	}
	data, err := MarshalResult(r)
	if err != nil {
		return nil, false, err
	}
	if err := atomicfile.Write(s.Path(taskID), data, 0o600); err != nil {
		return nil, false, fmt.Errorf("task %s: store result: %w", taskID, err)
	}
	crashpoint.Hit("result.stored")
	return r, true, nil
}

// MoveAside renames a stored result that cannot be trusted (its signature
// does not verify) to <task_id>.json.untrusted-<n> in the results folder, so
// the task's answer can be stored again; the file is kept for whoever looks
// into it. It returns the new name.
func (s *Store) MoveAside(taskID string) (string, error) {
	if err := ValidateTaskID(taskID); err != nil {
		return "", err
	}
	unlock := s.lockLocal(taskID)
	defer unlock()
	unlockFile, err := flock.Lock(filepath.Join(s.dir, ".locks", taskID+".lock"))
	if err != nil {
		return "", fmt.Errorf("task %s: lock: %w", taskID, err)
	}
	defer unlockFile()
	for i := 1; ; i++ {
		aside := fmt.Sprintf("%s.untrusted-%d", s.Path(taskID), i)
		if _, err := os.Lstat(aside); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := os.Rename(s.Path(taskID), aside); err != nil {
			return "", err
		}
		return filepath.Base(aside), atomicfile.SyncDir(s.dir)
	}
}

// lockLocal serializes goroutines of this process on one task_id; the file
// lock alone would not, since flock locks are per open file description but
// we want waiters to queue cheaply and then read the stored result.
func (s *Store) lockLocal(taskID string) func() {
	s.mu.Lock()
	l := s.locks[taskID]
	if l == nil {
		l = &taskLock{}
		s.locks[taskID] = l
	}
	l.refs++
	s.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		s.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(s.locks, taskID)
		}
		s.mu.Unlock()
	}
}
