package rules

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/internal/atomicfile"
	"github.com/vigil-dev/vigil/internal/crashpoint"
	"github.com/vigil-dev/vigil/internal/flock"
	"github.com/vigil-dev/vigil/preview"
)

// MaxRuntimeLifetime bounds how long a rule added at run time lives: such
// a rule always has an expiry (a standing rule belongs in config.toml,
// where it is reviewed and has examples).
const MaxRuntimeLifetime = 30 * 24 * time.Hour

// MaxReasonBytes bounds the reason given for adding or revoking a rule.
const MaxReasonBytes = 500

// RuntimeIDPrefix starts the id of every rule added at run time.
const RuntimeIDPrefix = "rt-"

// The states of a stored rule. Only an active rule decides.
const (
	StateAdding = "adding" // its file is written, its rule_added entry may not be
	StateActive = "active"
	StateEnding = "ending" // revoked or expired: its entry may not be written yet
)

// ErrUnknownRule is what revoking a rule that is not (or no longer)
// active in the store returns.
var ErrUnknownRule = errors.New("no such runtime rule")

// Stored is a runtime rule as its file in the store holds it.
type Stored struct {
	ID           string    `json:"id"`
	Decision     Decision  `json:"decision"`
	Agents       []string  `json:"agents,omitempty"`
	Capabilities []string  `json:"capabilities,omitempty"`
	Devices      []string  `json:"devices,omitempty"`
	MediaHosts   []string  `json:"media_hosts,omitempty"`
	ExpiresAt    time.Time `json:"expires_at"`
	CreatedAt    time.Time `json:"created_at"`
	CreatedBy    string    `json:"created_by"`
	Via          string    `json:"via,omitempty"`
	Key          string    `json:"key,omitempty"`
	Reason       string    `json:"reason"`
	State        string    `json:"state"`
	// LogFrom is the audit log's end before the entry of a transition in
	// progress (adding, ending) was appended: recovery looks for that
	// entry from there on, so it is written exactly once.
	LogFrom *int64  `json:"log_from,omitempty"`
	End     *Ending `json:"end,omitempty"`
	// Run, when set, binds the rule to a run of vigil serve: it ends when
	// that run does ("until Vigil restarts"; see run.go).
	Run string `json:"run,omitempty"`
}

// Ending is how a runtime rule ended: revoked by someone, or expired.
type Ending struct {
	Event  string    `json:"event"` // audit.EventRuleRevoked or audit.EventRuleExpired
	At     time.Time `json:"at"`
	By     string    `json:"by"`
	Via    string    `json:"via,omitempty"`
	Key    string    `json:"key,omitempty"`
	Reason string    `json:"reason"`
}

// Def is the rule as the engine compiles it.
func (s Stored) Def() Def {
	return Def{RuleConfig: config.RuleConfig{ID: s.ID, Decision: string(s.Decision), Agents: s.Agents,
		Capabilities: s.Capabilities, Devices: s.Devices, MediaHosts: s.MediaHosts,
		Expires: s.ExpiresAt.UTC().Format(time.RFC3339)}, Source: SourceRuntime, CreatedBy: s.CreatedBy}
}

// Actor is who adds or revokes a rule: "operator:<name>", with the
// surface (via) and, for an SSH operator, the key's fingerprint.
type Actor struct {
	By, Via, Key string
}

// AddRequest is a runtime rule to add: the match fields as a config rule
// has them (no `when`, no examples), an expiry and why.
type AddRequest struct {
	Decision     Decision
	Agents       []string
	Capabilities []string
	Devices      []string
	MediaHosts   []string
	ExpiresAt    time.Time
	// UntilRestart binds the rule to the live run of vigil serve: it ends
	// when serve stops or starts again, or at ExpiresAt (zero: the longest
	// a runtime rule may live), whichever comes first.
	UntilRestart bool
	Reason       string
	Actor
}

// Store keeps the rules added at run time in a folder of the home, one
// JSON file per rule (<id>.json) and a generation file every change
// rewrites (what Live watches). Every change happens under the folder's
// lock, in this order, with a crash point after each durable step:
//
//	add:    file (adding, log_from) → rule_added entry → file (active) + generation
//	end:    file (ending, log_from) + generation → rule_revoked|rule_expired entry → file removed + generation
//
// Recovery, at the start of every locked operation, finishes what a crash
// interrupted: an adding rule whose entry is in the log becomes active,
// one whose entry is not is removed (the add never happened: nobody saw it
// succeed, and it never decided); an ending rule gets its entry if it is
// missing and is removed. A rule decides only while active, so a revoked
// rule stops deciding when its file says ending, before its entry.
type Store struct {
	dir string
	log *audit.Log
	now func() time.Time
	// NewID makes a rule id (RuntimeIDPrefix and 8 random hex digits by
	// default); tests set it.
	NewID func() string
}

// GenerationFile is the file in the store's folder that every change
// rewrites.
const GenerationFile = "generation"

// OpenStore opens the store in dir, auditing to log. The folder is made
// by the first Add: a home where no rule was ever added has none, and an
// account that can only read the home can still open its queue.
func OpenStore(dir string, log *audit.Log, now func() time.Time) (*Store, error) {
	return &Store{dir: dir, log: log, now: now, NewID: randomID}, nil
}

// Dir is the store's folder.
func (s *Store) Dir() string { return s.dir }

func randomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return RuntimeIDPrefix + hex.EncodeToString(b[:])
}

// CheckRequest validates a request as a config rule would be (the same
// checks, the same error text with the rule's key), plus what a runtime
// rule needs: a reason and an expiry after now, at most
// MaxRuntimeLifetime away.
func CheckRequest(r AddRequest, now time.Time) error {
	if strings.TrimSpace(r.Reason) == "" {
		return errors.New("reason: must say why the rule is added")
	}
	if err := task.CheckText(r.Reason, MaxReasonBytes); err != nil {
		return fmt.Errorf("reason: %w", err)
	}
	switch {
	case r.ExpiresAt.IsZero():
		return errors.New("expires: a rule added at run time must expire (a standing rule belongs in config.toml)")
	case !r.ExpiresAt.After(now):
		return fmt.Errorf("expires: must be after now (%s), got %s", now.UTC().Format(time.RFC3339), r.ExpiresAt.UTC().Format(time.RFC3339))
	case r.ExpiresAt.Sub(now) > MaxRuntimeLifetime:
		return fmt.Errorf("expires: at most %s from now (a standing rule belongs in config.toml), got %s", durText(MaxRuntimeLifetime), r.ExpiresAt.UTC().Format(time.RFC3339))
	}
	st := r.stored("rt-check", now)
	_, err := Compile([]Def{st.Def()}, Options{}, now)
	return err
}

func durText(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return d.String()
}

// Def is the rule r would add, with id, as the engine compiles it.
func (r AddRequest) Def(id string, now time.Time) Def { return r.stored(id, now).Def() }

func (r AddRequest) stored(id string, now time.Time) Stored {
	return Stored{ID: id, Decision: r.Decision, Agents: r.Agents, Capabilities: r.Capabilities, Devices: r.Devices,
		MediaHosts: r.MediaHosts, ExpiresAt: r.ExpiresAt.UTC().Truncate(time.Second), CreatedAt: now.UTC(),
		CreatedBy: r.By, Via: r.Via, Key: r.Key, Reason: preview.MaskString(r.Reason), State: StateActive}
}

// Add adds a runtime rule; reserved are ids it must not take (the
// config's rules). It returns the rule as stored, active.
func (s *Store) Add(r AddRequest, reserved []string) (Stored, error) {
	now := s.now()
	if r.UntilRestart && r.ExpiresAt.IsZero() {
		r.ExpiresAt = now.Add(MaxRuntimeLifetime)
	}
	if err := CheckRequest(r, now); err != nil {
		return Stored{}, err
	}
	unlock, err := s.lock()
	if err != nil {
		return Stored{}, err
	}
	defer unlock()
	if err := s.recoverLocked(); err != nil {
		return Stored{}, err
	}
	st := r.stored("", now)
	if r.UntilRestart {
		if err := s.bindRun(&st); err != nil {
			return Stored{}, err
		}
	}
	for range 10 {
		id := s.NewID()
		if _, err := os.Stat(s.path(id)); errors.Is(err, os.ErrNotExist) && !slices.Contains(reserved, id) {
			st.ID = id
			break
		}
	}
	if st.ID == "" {
		return Stored{}, errors.New("rules: could not make an unused rule id")
	}
	from, err := s.logEnd()
	if err != nil {
		return Stored{}, err
	}
	st.State, st.LogFrom = StateAdding, &from
	if err := s.write(st); err != nil {
		return Stored{}, err
	}
	crashpoint.Hit("rules.add.file")
	if err := s.appendAdded(st); err != nil {
		// the entry may or may not be in the log (a failed fsync): settle
		// the rule as recovery would, by what the log holds
		if _, serr := s.settle(st); serr != nil {
			return Stored{}, errors.Join(err, serr)
		}
		return Stored{}, err
	}
	crashpoint.Hit("rules.add.audit")
	st.State, st.LogFrom = StateActive, nil
	if err := s.write(st); err != nil {
		return Stored{}, err
	}
	if err := s.bump(); err != nil {
		return Stored{}, err
	}
	crashpoint.Hit("rules.add.done")
	return st, nil
}

// Revoke ends the runtime rule id at once. A rule that is not (or no
// longer) in the store is ErrUnknownRule.
func (s *Store) Revoke(id string, by Actor, reason string) (Stored, error) {
	if strings.TrimSpace(reason) == "" {
		return Stored{}, errors.New("reason: must say why the rule is revoked")
	}
	if err := task.CheckText(reason, MaxReasonBytes); err != nil {
		return Stored{}, fmt.Errorf("reason: %w", err)
	}
	unlock, err := s.lock()
	if err != nil {
		return Stored{}, err
	}
	defer unlock()
	if err := s.recoverLocked(); err != nil {
		return Stored{}, err
	}
	st, err := s.read(id)
	if errors.Is(err, os.ErrNotExist) || (err == nil && st.State != StateActive) {
		return Stored{}, fmt.Errorf("%w %q (it may have expired or been revoked already)", ErrUnknownRule, id)
	}
	if err != nil {
		return Stored{}, err
	}
	now := s.now()
	if !now.Before(st.ExpiresAt) {
		// it ended already, by itself: record that, not a revocation
		if err := s.end(st, expiry(st, now), "expire"); err != nil {
			return Stored{}, err
		}
		return Stored{}, fmt.Errorf("%w %q: it expired at %s", ErrUnknownRule, id, st.ExpiresAt.UTC().Format(time.RFC3339))
	}
	end := Ending{Event: audit.EventRuleRevoked, At: now.UTC(), By: by.By, Via: by.Via, Key: by.Key,
		Reason: preview.MaskString(reason)}
	return st, s.end(st, end, "revoke")
}

// Sweep ends every active rule that has expired by now, each with
// exactly one rule_expired entry (the store's lock makes two processes
// sweeping at once write one), and returns the ids it ended.
func (s *Store) Sweep() ([]string, error) {
	if !s.exists() {
		return nil, nil
	}
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.recoverLocked(); err != nil {
		return nil, err
	}
	all, err := s.readAll()
	if err != nil {
		return nil, err
	}
	now := s.now()
	run, alive := readRun(s.dir)
	var ended []string
	for _, st := range all {
		if st.State != StateActive {
			continue
		}
		end := expiry(st, now)
		switch {
		case !runActive(st, run, alive):
			end.Reason = staleRunReason(run, alive)
		case now.Before(st.ExpiresAt):
			continue
		}
		if err := s.end(st, end, "expire"); err != nil {
			return ended, err
		}
		ended = append(ended, st.ID)
	}
	return ended, nil
}

// expiry is how st, expired by now, ends.
func expiry(st Stored, now time.Time) Ending {
	return Ending{Event: audit.EventRuleExpired, At: now.UTC(), By: "vigil", Reason: "expired at " + st.ExpiresAt.UTC().Format(time.RFC3339)}
}

// end takes an active rule through ending to removed (see Store).
func (s *Store) end(st Stored, end Ending, point string) error {
	from, err := s.logEnd()
	if err != nil {
		return err
	}
	st.State, st.LogFrom, st.End = StateEnding, &from, &end
	if err := s.write(st); err != nil {
		return err
	}
	if err := s.bump(); err != nil {
		return err
	}
	crashpoint.Hit("rules." + point + ".file")
	if err := s.appendEnded(st); err != nil {
		return err // ending: it no longer decides; recovery writes the entry
	}
	crashpoint.Hit("rules." + point + ".audit")
	if err := s.remove(st.ID); err != nil {
		return err
	}
	if err := s.bump(); err != nil {
		return err
	}
	crashpoint.Hit("rules." + point + ".done")
	return nil
}

// Active lists the rules that decide now, in the order they were added
// (expired ones not yet swept are left out).
func (s *Store) Active() ([]Stored, error) { return ActiveIn(s.dir, s.now()) }

// ActiveIn lists the rules that decide at now in the store folder dir,
// reading only (no lock, no recovery, no sweep): what `vigil rules test`
// shows. A folder that does not exist holds none.
func ActiveIn(dir string, now time.Time) ([]Stored, error) {
	all, err := readDir(dir)
	if err != nil {
		return nil, err
	}
	run, alive := readRun(dir)
	out := all[:0]
	for _, st := range all {
		if st.State == StateActive && now.Before(st.ExpiresAt) && runActive(st, run, alive) {
			out = append(out, st)
		}
	}
	return out, nil
}

// Lookup is the stored rule id, whatever its state; ErrUnknownRule when
// there is none.
func (s *Store) Lookup(id string) (Stored, error) {
	st, err := s.read(id)
	if errors.Is(err, os.ErrNotExist) {
		return Stored{}, fmt.Errorf("%w %q", ErrUnknownRule, id)
	}
	return st, err
}

// Recover finishes what a crash interrupted (see Store) under the lock.
func (s *Store) Recover() error {
	if !s.exists() {
		return nil
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	return s.recoverLocked()
}

func (s *Store) recoverLocked() error {
	all, err := s.readAll()
	if err != nil {
		return err
	}
	changed := false
	for _, st := range all {
		c, err := s.settle(st)
		if err != nil {
			return err
		}
		changed = changed || c
	}
	if changed {
		return s.bump()
	}
	return nil
}

// settle finishes a transition st was left in (see Store): an adding
// rule becomes active when its entry is in the log, else it is removed;
// an ending rule gets its entry if missing, then is removed. It reports
// whether it changed anything.
func (s *Store) settle(st Stored) (bool, error) {
	switch st.State {
	case StateAdding:
		found, err := s.logged(st, audit.EventRuleAdded)
		if err != nil {
			return false, err
		}
		if found {
			st.State, st.LogFrom = StateActive, nil
			return true, s.write(st)
		}
		return true, s.remove(st.ID)
	case StateEnding:
		if st.End == nil {
			return false, fmt.Errorf("rules: %s: ending without how it ended", s.path(st.ID))
		}
		found, err := s.logged(st, st.End.Event)
		if err != nil {
			return false, err
		}
		if !found {
			if err := s.appendEnded(st); err != nil {
				return false, err
			}
		}
		return true, s.remove(st.ID)
	}
	return false, nil
}

// logged says whether the log holds event for st after st.LogFrom.
func (s *Store) logged(st Stored, event string) (bool, error) {
	from := int64(0)
	if st.LogFrom != nil {
		from = *st.LogFrom
	}
	target := "rule:" + st.ID
	found := false
	_, err := audit.ScanQuery(context.Background(), s.log.Path(), from, audit.Query{Event: event}, func(l audit.Line) bool {
		if l.Err == nil && l.Entry.Target == target {
			found = true
			return false
		}
		return true
	})
	return found, err
}

// ruleDetails are a rule's fields as its audit entries carry them.
func ruleDetails(st Stored) map[string]any {
	def := st.Def()
	set, err := Compile([]Def{def}, Options{}, st.CreatedAt)
	hash := ""
	if err == nil {
		hash = set.rules[0].Hash
	}
	return map[string]any{"rule_id": st.ID, "decision": string(st.Decision), "agents": nonNil(st.Agents),
		"capabilities": nonNil(st.Capabilities), "devices": nonNil(st.Devices), "media_hosts": nonNil(st.MediaHosts),
		"expires_at": st.ExpiresAt.UTC().Format(time.RFC3339), "hash": hash, "source": SourceRuntime}
}

func (s *Store) appendAdded(st Stored) error {
	d := ruleDetails(st)
	d["reason"] = st.Reason
	withActor(d, st.Via, st.Key)
	_, err := s.log.Append(audit.Entry{Actor: st.CreatedBy, Event: audit.EventRuleAdded, Target: "rule:" + st.ID,
		Success: true, Details: audit.Details(d)})
	return err
}

func (s *Store) appendEnded(st Stored) error {
	d := ruleDetails(st)
	d["reason"] = st.End.Reason
	d["created_by"] = st.CreatedBy
	withActor(d, st.End.Via, st.End.Key)
	_, err := s.log.Append(audit.Entry{Actor: st.End.By, Event: st.End.Event, Target: "rule:" + st.ID,
		Success: true, Details: audit.Details(d)})
	return err
}

func withActor(d map[string]any, via, key string) {
	if via != "" {
		d["via"] = via
	}
	if key != "" {
		d["key"] = key
	}
}

func (s *Store) logEnd() (int64, error) {
	if err := s.log.CheckEnd(); err != nil {
		return 0, err
	}
	end, err := audit.EndOfCompleteLines(s.log.Path())
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	return end, err
}

func (s *Store) exists() bool {
	_, err := os.Stat(s.dir)
	return err == nil
}

// lock takes the store's lock, making the folder when it is missing.
func (s *Store) lock() (func(), error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	unlock, err := flock.Lock(filepath.Join(s.dir, ".lock"))
	if err != nil {
		return nil, fmt.Errorf("rules: lock: %w", err)
	}
	return unlock, nil
}

func (s *Store) path(id string) string { return filepath.Join(s.dir, id+".json") }

func (s *Store) write(st Stored) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(s.path(st.ID), append(b, '\n'), 0o600)
}

func (s *Store) remove(id string) error {
	if err := os.Remove(s.path(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return atomicfile.SyncDir(s.dir)
}

func (s *Store) read(id string) (Stored, error) {
	if !validRuntimeID(id) {
		return Stored{}, os.ErrNotExist
	}
	return readStored(s.path(id))
}

// validRuntimeID keeps an id given on the command line inside the folder.
func validRuntimeID(id string) bool {
	return strings.HasPrefix(id, RuntimeIDPrefix) && !strings.ContainsAny(id, `/\`)
}

func readStored(path string) (Stored, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Stored{}, err
	}
	var st Stored
	if err := json.Unmarshal(b, &st); err != nil {
		return Stored{}, fmt.Errorf("rules: %s: %w", path, err)
	}
	if st.ID+".json" != filepath.Base(path) {
		return Stored{}, fmt.Errorf("rules: %s holds rule %q", path, st.ID)
	}
	return st, nil
}

// readAll reads every rule file, in the order the rules were added.
func (s *Store) readAll() ([]Stored, error) {
	return readDir(s.dir)
}

func readDir(dir string) ([]Stored, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Stored
	for _, e := range ents {
		n := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(n, ".") || !strings.HasSuffix(n, ".json") || n == RunFile {
			continue
		}
		st, err := readStored(filepath.Join(dir, n))
		if errors.Is(err, os.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	slices.SortStableFunc(out, func(a, b Stored) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// bump rewrites the generation file with the next number.
func (s *Store) bump() error {
	p := filepath.Join(s.dir, GenerationFile)
	n, _ := readGeneration(p)
	return atomicfile.Write(p, []byte(strconv.FormatUint(n+1, 10)+"\n"), 0o600)
}

func readGeneration(p string) (uint64, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}
