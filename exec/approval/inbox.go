package approval

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/internal/atomicfile"
	"github.com/vigil-dev/vigil/internal/flock"
)

// Inbox folders: other programs write manifests into new/ (write elsewhere,
// then rename in, so a half-written file is never picked up); Vigil claims a
// file by renaming it into processing/ (only one process wins the rename),
// and leaves refused ones in rejected/ beside a .reason.json.
const (
	inboxNew        = "new"
	inboxProcessing = "processing"
	inboxRejected   = "rejected"
)

// InboxNew is the folder other programs drop manifests into.
func (q *Queue) InboxNew() string { return filepath.Join(q.o.Inbox, inboxNew) }

// Rejection is what rejected/<name>.reason.json holds.
type Rejection struct {
	File   string      `json:"file"`
	TaskID string      `json:"task_id"`
	Error  *task.Error `json:"error"`
}

// SweepInbox processes every manifest waiting in the inbox (and any a crash
// left in processing/). Several Vigil processes may sweep at once: a file is
// handled under its own lock (processing/.locks/<name>), taken before it is
// claimed and held until it is gone, so no two processes submit it and a
// leftover is only taken over when its owner is dead. Outcomes come in
// file-name order.
func (q *Queue) SweepInbox(ctx context.Context) ([]Outcome, error) {
	locks := filepath.Join(q.o.Inbox, inboxProcessing, ".locks")
	for _, d := range []string{q.InboxNew(), filepath.Join(q.o.Inbox, inboxRejected), locks} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	left, err := names(filepath.Join(q.o.Inbox, inboxProcessing))
	if err != nil {
		return nil, err
	}
	fresh, err := names(q.InboxNew())
	if err != nil {
		return nil, err
	}
	var outs []Outcome
	handle := func(name string, fromNew bool) error {
		var unlock func()
		if fromNew {
			u, err := flock.Lock(filepath.Join(locks, name))
			if err != nil {
				return err
			}
			unlock = u
		} else if unlock = flock.TryLock(filepath.Join(locks, name)); unlock == nil {
			return nil // a live process is handling it
		}
		defer unlock()
		if fromNew {
			err := os.Rename(filepath.Join(q.InboxNew(), name), filepath.Join(q.o.Inbox, inboxProcessing, name))
			if errors.Is(err, os.ErrNotExist) {
				return nil // another process claimed it first
			}
			if err != nil {
				return err
			}
		}
		out, ok, err := q.processClaimed(ctx, name)
		if ok {
			outs = append(outs, out)
		}
		return err
	}
	for _, n := range left {
		if err := ctx.Err(); err != nil {
			return outs, err
		}
		if err := handle(n, false); err != nil {
			return outs, err
		}
	}
	for _, n := range fresh {
		if err := ctx.Err(); err != nil {
			return outs, err
		}
		if err := handle(n, true); err != nil {
			return outs, err
		}
	}
	return outs, nil
}

// processClaimed submits a claimed file; ok is false when it was already gone.
func (q *Queue) processClaimed(ctx context.Context, name string) (Outcome, bool, error) {
	src := filepath.Join(q.o.Inbox, inboxProcessing, name)
	// what was listed as a regular file may have been swapped for a FIFO
	// or a symlink before the claim: it is refused, never read or followed
	f, err := task.OpenStored(src)
	if errors.Is(err, os.ErrNotExist) {
		return Outcome{}, false, nil
	}
	var out Outcome
	if errors.Is(err, task.ErrNotAFile) {
		out, err = q.reject("", "", "", "", task.Errorf(task.ExecutionFailed,
			"inbox: the file cannot be read: %s", errReason(err)), "inbox")
	} else {
		if err != nil {
			return Outcome{}, false, err
		}
		raw, rerr := io.ReadAll(io.LimitReader(f, task.MaxManifestBytes+1))
		f.Close()
		if rerr != nil {
			return Outcome{}, false, rerr
		}
		out, err = q.Submit(ctx, raw, "inbox")
	}
	if err != nil {
		return out, true, err // left in processing/: retried on the next sweep
	}
	if out.State == rejected {
		rej := Rejection{File: name, TaskID: out.TaskID, Error: out.Error}
		b, _ := json.MarshalIndent(rej, "", "  ")
		dst := filepath.Join(q.o.Inbox, inboxRejected, name)
		if err := atomicfile.Write(dst+".reason.json", append(b, '\n'), 0o600); err != nil {
			return out, true, err
		}
		return out, true, ignoreGone(os.Rename(src, dst))
	}
	return out, true, ignoreGone(os.Remove(src))
}

func ignoreGone(err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

func names(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && !strings.HasPrefix(n, ".") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}
