package media

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/vigil-dev/vigil/internal/atomicfile"
	"github.com/vigil-dev/vigil/internal/flock"
)

// Sim is the simulated player: its state is a small JSON file under a
// folder (devices/), so separate Vigil processes — the TUI and a CLI
// approve — drive and watch the same device. Position does not advance with
// time, which keeps demos and golden files deterministic.
type Sim struct {
	id  string
	dir string
}

// SimState is what the simulated player shows.
type SimState struct {
	Device          string  `json:"device"`
	State           string  `json:"state"` // idle | playing | paused
	MediaURI        string  `json:"media_uri"`
	PositionSeconds float64 `json:"position_seconds"`
}

type simCommand struct {
	Action          string   `json:"action"`
	MediaURI        string   `json:"media_uri,omitempty"`
	PositionSeconds *float64 `json:"position_seconds,omitempty"`
}

// NewSim returns the simulated device id keeping its state under dir.
func NewSim(id, dir string) (*Sim, error) {
	if dir == "" {
		return nil, errors.New("sim: a state folder is required")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	return &Sim{id: id, dir: dir}, nil
}

func (s *Sim) path() string { return filepath.Join(s.dir, s.id+".json") }

// Plan implements Driver.
func (s *Sim) Plan(a Action) (Plan, error) {
	var c simCommand
	var effect string
	switch a.Capability {
	case CapPlay:
		c = simCommand{Action: "play", MediaURI: a.MediaURI}
		effect = fmt.Sprintf("Play %s on %s (simulated player)", a.MediaURI, s.id)
	case CapPause:
		c, effect = simCommand{Action: "pause"}, fmt.Sprintf("Pause playback on %s (simulated player)", s.id)
	case CapStop:
		c, effect = simCommand{Action: "stop"}, fmt.Sprintf("Stop playback on %s (simulated player)", s.id)
	case CapSeek:
		p := a.Position
		c = simCommand{Action: "seek", PositionSeconds: &p}
		effect = fmt.Sprintf("Seek to %s on %s (simulated player)", fmtSeconds(p), s.id)
	default:
		return Plan{}, fmt.Errorf("sim: unsupported capability %q", a.Capability)
	}
	body, err := json.Marshal(c)
	if err != nil {
		return Plan{}, err
	}
	return Plan{Method: "SIM", URL: "sim://" + s.id, Headers: map[string]string{"Content-Type": "application/json"},
		Body: body, Effect: effect}, nil
}

// Do implements Driver: read, change and atomically rewrite the state file
// under a lock, so two processes never lose each other's change.
func (s *Sim) Do(ctx context.Context, p Plan) error {
	if p.URL != "sim://"+s.id {
		return fmt.Errorf("sim: plan is for %s, this device is %s", p.URL, s.id)
	}
	var c simCommand
	dec := json.NewDecoder(bytes.NewReader(p.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return fmt.Errorf("sim: bad command: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	unlock, err := flock.Lock(s.path() + ".lock")
	if err != nil {
		return Transient(fmt.Errorf("sim: lock: %w", err))
	}
	defer unlock()
	st, err := s.read()
	if err != nil {
		return err
	}
	switch c.Action {
	case "play":
		if c.MediaURI == "" {
			return errors.New("sim: play needs media_uri")
		}
		st.State, st.MediaURI, st.PositionSeconds = "playing", c.MediaURI, 0
	case "pause":
		if st.State == "playing" {
			st.State = "paused"
		}
	case "stop":
		st.State, st.MediaURI, st.PositionSeconds = "idle", "", 0
	case "seek":
		if c.PositionSeconds == nil {
			return errors.New("sim: seek needs position_seconds")
		}
		if st.State == "idle" {
			// As mpv answers: nothing is loaded, so there is nothing to seek in.
			return errors.New("sim: nothing is playing on " + s.id + ", cannot seek")
		}
		st.PositionSeconds = *c.PositionSeconds
	default:
		return fmt.Errorf("sim: unknown action %q", c.Action)
	}
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	// The journal is the simulated device's own record of every command it
	// applied, in order — what a real device's log would show. Tests use it
	// to prove an approved action reached the device exactly once.
	if err := s.appendJournal(p.Body); err != nil {
		return err
	}
	return atomicfile.Write(s.path(), append(data, '\n'), 0o600)
}

// JournalPath is where the device appends each command it applied.
func (s *Sim) JournalPath() string { return filepath.Join(s.dir, s.id+".journal") }

func (s *Sim) appendJournal(cmd []byte) error {
	f, err := os.OpenFile(s.JournalPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(bytes.TrimSpace(cmd), '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (s *Sim) read() (SimState, error) {
	st := SimState{Device: s.id, State: "idle"}
	f, err := os.Open(s.path())
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("sim: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return st, fmt.Errorf("sim: %w", err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("sim: state file %s is corrupt: %w", s.path(), err)
	}
	st.Device = s.id
	return st, nil
}

// Read returns the simulated player's state (for the demo and tests).
func (s *Sim) Read() (SimState, error) { return s.read() }

// State implements Driver.
func (s *Sim) State(ctx context.Context) ([]byte, error) {
	st, err := s.read()
	if err != nil {
		return nil, err
	}
	return json.Marshal(st)
}
