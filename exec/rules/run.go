package rules

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/vigil-dev/vigil/internal/atomicfile"
)

// A rule "until Vigil restarts" is bound to a run of `vigil serve`, the
// process that stays up and executes this home's tasks. A task is decided
// in whichever process receives it (serve, each `vigil mcp`, `vigil
// submit`), so such a rule lives in the store like any runtime rule,
// marked with the run's token, and every process honours it while that
// run is alive. It ends, audited rule_expired, when the run ends: serve
// stopping (EndRun), serve starting again (BeginRun), or any process
// finding the run's process gone. It also carries the usual expiry, at
// most MaxRuntimeLifetime away.

// RunFile is the store's record of the live run of vigil serve.
const RunFile = "run.json"

// Run is a run of vigil serve, as RunFile records it.
type Run struct {
	Token     string    `json:"token"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
}

// alive says whether the run's process still exists.
func (r Run) alive() bool { return r.PID > 0 && processExists(r.PID) }

// readRun is the store's current run; ok false when there is none or its
// process is gone.
func readRun(dir string) (Run, bool) {
	b, err := os.ReadFile(filepath.Join(dir, RunFile))
	if err != nil {
		return Run{}, false
	}
	var r Run
	if json.Unmarshal(b, &r) != nil || r.Token == "" {
		return Run{}, false
	}
	return r, r.alive()
}

// BeginRun records this process as the live run of vigil serve: rules
// bound to an earlier run end first (rule_expired, "Vigil restarted").
// The returned end, called when serve stops, ends the rules bound to this
// run ("Vigil stopped") and removes the record.
func (s *Store) BeginRun() (end func() error, err error) {
	var tok [8]byte
	_, _ = rand.Read(tok[:])
	run := Run{Token: hex.EncodeToString(tok[:]), PID: os.Getpid(), StartedAt: s.now().UTC()}
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.recoverLocked(); err != nil {
		return nil, err
	}
	if err := s.endRunRules(func(string) bool { return true }, "Vigil restarted"); err != nil {
		return nil, err
	}
	b, err := json.Marshal(run)
	if err != nil {
		return nil, err
	}
	if err := atomicfile.Write(filepath.Join(s.dir, RunFile), b, 0o600); err != nil {
		return nil, err
	}
	return func() error { return s.endRun(run.Token) }, s.bump()
}

// endRun ends the rules of run token and its record, if it is still the
// current run.
func (s *Store) endRun(token string) error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if err := s.recoverLocked(); err != nil {
		return err
	}
	if r, _ := readRun(s.dir); r.Token == token {
		if err := os.Remove(filepath.Join(s.dir, RunFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := s.endRunRules(func(r string) bool { return r == token }, "Vigil stopped"); err != nil {
		return err
	}
	return s.bump()
}

// endRunRules ends every active rule bound to a run that over says is
// over, auditing why.
func (s *Store) endRunRules(over func(run string) bool, why string) error {
	all, err := s.readAll()
	if err != nil {
		return err
	}
	now := s.now()
	for _, st := range all {
		if st.State != StateActive || st.Run == "" || !over(st.Run) {
			continue
		}
		end := expiry(st, now)
		end.Reason = why
		if err := s.end(st, end, "expire"); err != nil {
			return err
		}
	}
	return nil
}

// bindRun marks st as living until the current run ends; an error when no
// vigil serve is running on this home.
func (s *Store) bindRun(st *Stored) error {
	r, ok := readRun(s.dir)
	if !ok {
		return errors.New("until Vigil restarts: no vigil serve is running on this home, so nothing would end the rule; give it an expiry")
	}
	st.Run = r.Token
	return nil
}

// runActive says whether st, if bound to a run, is bound to the live one.
func runActive(st Stored, run Run, alive bool) bool {
	return st.Run == "" || (alive && st.Run == run.Token)
}

// staleRunReason says why a rule bound to another run than the live one
// ended.
func staleRunReason(run Run, alive bool) string {
	if alive {
		return "Vigil restarted"
	}
	if run.PID > 0 {
		return fmt.Sprintf("Vigil stopped (its process, pid %d, is gone)", run.PID)
	}
	return "Vigil stopped"
}

// CheckRun says why a rule "until Vigil restarts" cannot be added now (no
// vigil serve is running on this home), nil when it can: what Add would
// refuse it with, for a prompt to say before offering it. Add checks again.
func (s *Store) CheckRun() error { return s.bindRun(&Stored{}) }
