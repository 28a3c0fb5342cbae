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
// left in processing/). It returns the outcomes in file-name order.
func (q *Queue) SweepInbox(ctx context.Context) ([]Outcome, error) {
	for _, d := range []string{inboxNew, inboxProcessing, inboxRejected} {
		if err := os.MkdirAll(filepath.Join(q.o.Inbox, d), 0o700); err != nil {
			return nil, err
		}
	}
	var outs []Outcome
	// leftovers first: they were claimed before a crash
	left, err := names(filepath.Join(q.o.Inbox, inboxProcessing))
	if err != nil {
		return nil, err
	}
	fresh, err := names(q.InboxNew())
	if err != nil {
		return nil, err
	}
	var claimed []string
	claimed = append(claimed, left...)
	for _, n := range fresh {
		err := os.Rename(filepath.Join(q.InboxNew(), n), filepath.Join(q.o.Inbox, inboxProcessing, n))
		if errors.Is(err, os.ErrNotExist) {
			continue // another process claimed it
		}
		if err != nil {
			return outs, err
		}
		claimed = append(claimed, n)
	}
	for _, n := range claimed {
		if err := ctx.Err(); err != nil {
			return outs, err
		}
		out, err := q.processClaimed(ctx, n)
		if err != nil {
			return outs, err
		}
		outs = append(outs, out)
	}
	return outs, nil
}

func (q *Queue) processClaimed(ctx context.Context, name string) (Outcome, error) {
	src := filepath.Join(q.o.Inbox, inboxProcessing, name)
	f, err := os.Open(src)
	if errors.Is(err, os.ErrNotExist) {
		return Outcome{}, nil
	}
	if err != nil {
		return Outcome{}, err
	}
	raw, err := io.ReadAll(io.LimitReader(f, task.MaxManifestBytes+1))
	f.Close()
	if err != nil {
		return Outcome{}, err
	}
	out, err := q.Submit(ctx, raw, "inbox")
	if err != nil {
		return out, err // left in processing/: retried on the next sweep
	}
	if out.State == rejected {
		rej := Rejection{File: name, TaskID: out.TaskID, Error: out.Error}
		b, _ := json.MarshalIndent(rej, "", "  ")
		dst := filepath.Join(q.o.Inbox, inboxRejected, name)
		if err := atomicfile.Write(dst+".reason.json", append(b, '\n'), 0o600); err != nil {
			return out, err
		}
		return out, os.Rename(src, dst)
	}
	return out, os.Remove(src)
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
