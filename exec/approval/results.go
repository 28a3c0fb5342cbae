package approval

import (
	"errors"
	"fmt"

	"github.com/vigil-dev/vigil/exec/task"
)

// Result returns a task's signed result, checked to answer this task's
// request: a result stored under the id that names another task or another
// request (copied there, signed or not) is an error wrapping
// task.ErrNotThisTask, never served as this task's answer.
func (q *Queue) Result(id string) (*task.Result, error) {
	if err := task.ValidateTaskID(id); err != nil {
		return nil, err
	}
	r, err := q.st.load(id)
	switch {
	case err == nil:
		return q.resultFor(&r)
	case errors.Is(err, ErrNotFound):
		if claim, cerr := q.st.loadSearch(id); cerr == nil {
			return q.resultOf(id, claim.RequestHash)
		}
	}
	// no record to hold it to (a damaged one, or a result alone): the
	// store still checks it names this task
	return q.o.Results.Load(id)
}

// resultFor is the stored result of r's task, checked to answer r's request.
func (q *Queue) resultFor(r *Record) (*task.Result, error) {
	return q.resultOf(r.TaskID, r.RequestHash)
}

// resultOf loads id's stored result (the store checks the task id) and
// checks it answers the request with requestHash.
func (q *Queue) resultOf(id, requestHash string) (*task.Result, error) {
	res, err := q.o.Results.Load(id)
	if err != nil {
		return nil, err
	}
	if requestHash != "" && res.RequestHash != requestHash {
		return nil, fmt.Errorf("task %s: %w: it answers request sha256:%s, the task's request is sha256:%s",
			id, task.ErrNotThisTask, shortHash(res.RequestHash), shortHash(requestHash))
	}
	return res, nil
}

// ResultAnswers refuses a result that answers another task, or another
// request than rec's: a signed result copied into this task's place
// verifies, but is not its answer.
func ResultAnswers(id string, rec Record, res *task.Result) error {
	switch {
	case res.TaskID != id:
		return fmt.Errorf("task %s: %w: it names task %q", id, task.ErrNotThisTask, res.TaskID)
	case rec.RequestHash != "" && res.RequestHash != rec.RequestHash:
		return fmt.Errorf("task %s: %w: it answers another request than the task's", id, task.ErrNotThisTask)
	}
	return nil
}
