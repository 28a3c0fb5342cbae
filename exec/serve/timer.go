package serve

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/metrics"
	"github.com/vigil-dev/vigil/exec/task"
)

// RecordTimer times executions from tasks/<id>/record.json: decided_at to
// finished_at, once the record is final. It reads the file and nothing else
// (opening the task through the queue could repair or expire it).
func RecordTimer(tasksDir string) metrics.Timer {
	return func(id string) (time.Time, time.Time, bool) {
		if task.ValidateTaskID(id) != nil {
			return time.Time{}, time.Time{}, false
		}
		b, err := os.ReadFile(filepath.Join(tasksDir, id, "record.json"))
		if err != nil {
			return time.Time{}, time.Time{}, false
		}
		var r approval.Record
		if json.Unmarshal(b, &r) != nil || !r.State.Final() || r.LogFrom != nil || r.DecidedAt == nil || r.FinishedAt == nil {
			return time.Time{}, time.Time{}, false
		}
		return *r.DecidedAt, *r.FinishedAt, true
	}
}
