package media

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-dev/vigil/preview"
)

// MPV drives an mpv player over its JSON IPC socket
// (mpv --idle=yes --input-ipc-server=SOCK). Only absolute commands are sent:
// set_property pause true/false, loadfile … replace, seek … absolute+exact,
// stop — never toggles, so a retried command cannot undo itself.
type MPV struct {
	id     string
	socket string
	// poll is how long to wait between idle-active reads after stop.
	poll time.Duration
}

// NewMPV returns the mpv device id listening on socket.
func NewMPV(id, socket string) (*MPV, error) {
	if !strings.HasPrefix(socket, "/") {
		return nil, fmt.Errorf("devices[%s].socket: must be an absolute path, got %q", id, socket)
	}
	return &MPV{id: id, socket: socket, poll: 20 * time.Millisecond}, nil
}

const maxMPVLine = 1 << 20

func fmtSeconds(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) + " s" }

// Plan implements Driver. Body holds one mpv command object per line,
// exactly as written to the socket (Do adds only each line's request_id).
func (m *MPV) Plan(a Action) (Plan, error) {
	var cmds [][]any
	var effect string
	switch a.Capability {
	case CapPlay:
		if err := localAccessible(a.MediaURI); err != nil {
			return Plan{}, err
		}
		// loadfile keeps the pause property, so unpause first: playing a
		// file must not leave it silently paused.
		cmds = [][]any{{"set_property", "pause", false}, {"loadfile", a.MediaURI, "replace"}}
		effect = fmt.Sprintf("Play %s on %s (mpv), replacing what is playing", a.MediaURI, m.id)
	case CapPause:
		cmds, effect = [][]any{{"set_property", "pause", true}}, fmt.Sprintf("Pause playback on %s (mpv)", m.id)
	case CapStop:
		cmds, effect = [][]any{{"stop"}}, fmt.Sprintf("Stop playback on %s (mpv)", m.id)
	case CapSeek:
		cmds = [][]any{{"seek", a.Position, "absolute+exact"}}
		effect = fmt.Sprintf("Seek to %s on %s (mpv)", fmtSeconds(a.Position), m.id)
	default:
		return Plan{}, fmt.Errorf("mpv: unsupported capability %q", a.Capability)
	}
	var body bytes.Buffer
	for _, c := range cmds {
		line, err := json.Marshal(map[string]any{"command": c})
		if err != nil {
			return Plan{}, err
		}
		body.Write(line)
		body.WriteByte('\n')
	}
	return Plan{Method: "IPC", URL: "unix://" + m.socket, Headers: map[string]string{}, Body: body.Bytes(), Effect: effect}, nil
}

// localAccessible checks seed 004's "media_uri MUST be accessible to the
// target device" for local files: mpv runs on this machine.
func localAccessible(uri string) error {
	path := uri
	if strings.HasPrefix(uri, "file:") {
		u, err := url.Parse(uri)
		if err != nil {
			return fmt.Errorf("media_uri: %w", err)
		}
		path = u.Path
	}
	if !strings.HasPrefix(path, "/") || strings.Contains(uri, "://") && !strings.HasPrefix(uri, "file:") {
		return nil // a network URI: mpv reaches it itself
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("media_uri: %s is not accessible to the device: %v", path, errors.Unwrap(err))
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("media_uri: %s is not a regular file", path)
	}
	return nil
}

// mpvConn is one IPC connection: requests out, replies and events in.
type mpvConn struct {
	c      net.Conn
	r      *bufio.Reader
	nextID int
	events []map[string]any // events read while waiting for a reply
}

func (m *MPV) dial(ctx context.Context) (*mpvConn, func(), error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", m.socket)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		// mpv not (yet) listening, or restarting: worth a retry.
		return nil, nil, Transient(fmt.Errorf("mpv %s: connect %s: %w", m.id, m.socket, err))
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	return &mpvConn{c: c, r: bufio.NewReaderSize(c, 64<<10), nextID: 1}, func() { stop(); c.Close() }, nil
}

func (mc *mpvConn) readMsg(ctx context.Context) (map[string]any, error) {
	var line []byte
	for {
		chunk, isPrefix, err := mc.r.ReadLine()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, Transient(fmt.Errorf("mpv: read: %w", err))
		}
		line = append(line, chunk...)
		if len(line) > maxMPVLine {
			return nil, errors.New("mpv: reply line too long")
		}
		if !isPrefix {
			break
		}
	}
	var msg map[string]any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&msg); err != nil {
		return nil, fmt.Errorf("mpv: bad reply %q: %w", preview.Snippet(string(line), maxQuoted), err)
	}
	return msg, nil
}

// request sends one command and returns its reply's data; events that
// arrive meanwhile are kept for waitEvent.
func (mc *mpvConn) request(ctx context.Context, cmd []any) (any, error) {
	id := mc.nextID
	mc.nextID++
	line, err := json.Marshal(map[string]any{"command": cmd, "request_id": id})
	if err != nil {
		return nil, err
	}
	if _, err := mc.c.Write(append(line, '\n')); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, Transient(fmt.Errorf("mpv: write: %w", err))
	}
	for {
		msg, err := mc.readMsg(ctx)
		if err != nil {
			return nil, err
		}
		if _, isEvent := msg["event"]; isEvent {
			mc.events = append(mc.events, msg)
			continue
		}
		rid, _ := msg["request_id"].(json.Number)
		if rid.String() != strconv.Itoa(id) {
			continue
		}
		if e, _ := msg["error"].(string); e != "success" {
			return nil, &mpvError{cmd: fmt.Sprint(cmd[0]), msg: e}
		}
		return msg["data"], nil
	}
}

type mpvError struct{ cmd, msg string }

func (e *mpvError) Error() string { return fmt.Sprintf("mpv: %s: %s", e.cmd, e.msg) }

// waitEvent returns the first event (already buffered or still to come)
// for which match returns done; match may also return an error to stop.
func (mc *mpvConn) waitEvent(ctx context.Context, match func(map[string]any) (bool, error)) error {
	for {
		var ev map[string]any
		if len(mc.events) > 0 {
			ev, mc.events = mc.events[0], mc.events[1:]
		} else {
			msg, err := mc.readMsg(ctx)
			if err != nil {
				return err
			}
			if _, ok := msg["event"]; !ok {
				continue
			}
			ev = msg
		}
		done, err := match(ev)
		if err != nil || done {
			return err
		}
	}
}

// allowedMPV lists the only commands Do will send, with their argument
// shapes: mpv can also run programs ("run", "subprocess"), so a plan is
// checked even though Vigil built it itself.
func allowedMPV(cmd []any) error {
	if len(cmd) == 0 {
		return errors.New("mpv: empty command")
	}
	name, _ := cmd[0].(string)
	switch {
	case name == "set_property" && len(cmd) == 3 && cmd[1] == "pause":
		if _, ok := cmd[2].(bool); ok {
			return nil
		}
	case name == "loadfile" && len(cmd) == 3 && cmd[2] == "replace":
		if _, ok := cmd[1].(string); ok {
			return nil
		}
	case name == "seek" && len(cmd) == 3 && cmd[2] == "absolute+exact":
		if _, ok := cmd[1].(json.Number); ok {
			return nil
		}
	case name == "stop" && len(cmd) == 1:
		return nil
	}
	return fmt.Errorf("mpv: command %v is not one Vigil sends", cmd)
}

// Do implements Driver. It returns once mpv has done the work, not merely
// accepted it: a play waits for file-loaded (or the load error), a seek for
// playback-restart, a stop for idle — the seed's executor is synchronous.
func (m *MPV) Do(ctx context.Context, p Plan) error {
	if p.URL != "unix://"+m.socket {
		return fmt.Errorf("mpv: plan is for %s, this device is unix://%s", p.URL, m.socket)
	}
	var cmds [][]any
	for _, line := range bytes.Split(bytes.TrimRight(p.Body, "\n"), []byte("\n")) {
		var obj struct {
			Command []any `json:"command"`
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		dec.DisallowUnknownFields()
		if err := dec.Decode(&obj); err != nil {
			return fmt.Errorf("mpv: bad plan line %q: %w", preview.Snippet(string(line), maxQuoted), err)
		}
		if err := allowedMPV(obj.Command); err != nil {
			return err
		}
		cmds = append(cmds, obj.Command)
	}
	mc, closeConn, err := m.dial(ctx)
	if err != nil {
		return err
	}
	defer closeConn()
	for _, cmd := range cmds {
		data, err := mc.request(ctx, cmd)
		if err != nil {
			return err
		}
		switch cmd[0] {
		case "loadfile":
			entry := ""
			if d, ok := data.(map[string]any); ok {
				if n, ok := d["playlist_entry_id"].(json.Number); ok {
					entry = n.String()
				}
			}
			started := false
			err = mc.waitEvent(ctx, func(ev map[string]any) (bool, error) {
				id, _ := ev["playlist_entry_id"].(json.Number)
				switch ev["event"] {
				case "start-file":
					started = started || entry == "" || id.String() == entry
				case "file-loaded":
					return started, nil
				case "end-file":
					if (entry == "" || id.String() == entry) && ev["reason"] == "error" {
						fe, _ := ev["file_error"].(string)
						return false, fmt.Errorf("mpv: could not load %v: %s", cmd[1], fe)
					}
				}
				return false, nil
			})
		case "seek":
			err = mc.waitEvent(ctx, func(ev map[string]any) (bool, error) {
				return ev["event"] == "playback-restart", nil
			})
		case "stop":
			err = m.waitIdle(ctx, mc)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// waitIdle polls idle-active: stop on an already idle player emits no event
// to wait for.
func (m *MPV) waitIdle(ctx context.Context, mc *mpvConn) error {
	for {
		v, err := mc.request(ctx, []any{"get_property", "idle-active"})
		if err != nil {
			return err
		}
		if v == true {
			return nil
		}
		t := time.NewTimer(m.poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// MPVState is what State reports, in a fixed field order.
type MPVState struct {
	Idle    bool     `json:"idle"`
	Path    *string  `json:"path"`
	Pause   bool     `json:"pause"`
	TimePos *float64 `json:"time_pos"` // seconds, rounded to milliseconds
}

// ReadState reads mpv's own properties.
func (m *MPV) ReadState(ctx context.Context) (MPVState, error) {
	var st MPVState
	mc, closeConn, err := m.dial(ctx)
	if err != nil {
		return st, err
	}
	defer closeConn()
	get := func(name string) (any, error) {
		v, err := mc.request(ctx, []any{"get_property", name})
		var me *mpvError
		if errors.As(err, &me) && me.msg == "property unavailable" {
			return nil, nil // nothing loaded: path and time-pos do not exist
		}
		return v, err
	}
	idle, err := get("idle-active")
	if err != nil {
		return st, err
	}
	pause, err := get("pause")
	if err != nil {
		return st, err
	}
	path, err := get("path")
	if err != nil {
		return st, err
	}
	pos, err := get("time-pos")
	if err != nil {
		return st, err
	}
	st.Idle, _ = idle.(bool)
	st.Pause, _ = pause.(bool)
	if s, ok := path.(string); ok {
		st.Path = &s
	}
	if n, ok := pos.(json.Number); ok {
		if f, err := n.Float64(); err == nil {
			f = math.Round(f*1000) / 1000
			st.TimePos = &f
		}
	}
	return st, nil
}

// State implements Driver.
func (m *MPV) State(ctx context.Context) ([]byte, error) {
	st, err := m.ReadState(ctx)
	if err != nil {
		return nil, err
	}
	return json.Marshal(st)
}

// maxQuoted bounds the part of a bad line an error quotes; the line is
// masked before it is cut (preview.Snippet).
const maxQuoted = 80
