package media

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/internal/mpvtest"
)

func TestMPVRealPlayer(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "mpv.sock")
	wav := filepath.Join(dir, "tone.wav")
	mpvtest.WriteWAV(t, wav, 30)
	mpvtest.Start(t, sock)

	h := newHarness(t, []config.DeviceConfig{{ID: "speaker", Driver: "mpv", Socket: sock}}, func(o *Options) {
		o.ActionTimeout = 20 * time.Second // a loaded CI machine starts decoders slowly
	})
	drv := h.exec.drivers["speaker"].(*MPV)
	state := func() []byte {
		b, err := drv.State(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	// The plan is exactly what goes over the socket.
	p, err := h.exec.Prepare(h.manifest("m-play", CapPlay, `{"target_device":"speaker","media_uri":"`+wav+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	wantBody := `{"command":["set_property","pause",false]}` + "\n" + `{"command":["loadfile","` + wav + `","replace"]}` + "\n"
	if p.Plan.Method != "IPC" || p.Plan.URL != "unix://"+sock || string(p.Plan.Body) != wantBody {
		t.Fatalf("plan %s %s %q", p.Plan.Method, p.Plan.URL, p.Plan.Body)
	}

	// Play.
	idleState := state()
	r := h.run(h.manifest("m-play", CapPlay, `{"target_device":"speaker","media_uri":"`+wav+`"}`))
	if r.Status != task.StatusSuccess {
		t.Fatalf("play: %+v", r.Error)
	}
	if got := mpvtest.Get(t, sock, "path"); got != wav {
		t.Fatalf("after play mpv's path is %v", got)
	}
	if mpvtest.Get(t, sock, "pause") != false || mpvtest.Get(t, sock, "idle-active") != false {
		t.Fatal("after play mpv is paused or idle")
	}
	if r.ContentHashBefore != StateHash(idleState) || r.ContentHashAfter == r.ContentHashBefore {
		t.Fatalf("play hashes: before %s (idle %s) after %s", r.ContentHashBefore, StateHash(idleState), r.ContentHashAfter)
	}

	// Pause: mpv's pause property is true and the after-hash is the paused state.
	r = h.run(h.manifest("m-pause", CapPause, `{"target_device":"speaker"}`))
	if r.Status != task.StatusSuccess {
		t.Fatalf("pause: %+v", r.Error)
	}
	if mpvtest.Get(t, sock, "pause") != true {
		t.Fatal("after pause mpv is not paused")
	}
	paused := state()
	if r.ContentHashAfter != StateHash(paused) {
		t.Fatalf("pause after-hash %s, device state %s", r.ContentHashAfter, paused)
	}

	// Seek to 12 s while paused.
	r = h.run(h.manifest("m-seek", CapSeek, `{"target_device":"speaker","position_seconds":12}`))
	if r.Status != task.StatusSuccess {
		t.Fatalf("seek: %+v", r.Error)
	}
	// With --ao=null mpv reports time-pos up to its null output's 0.2 s
	// buffer behind the seek target (measured: 11.80-11.85 for a seek to 12),
	// so the bound is 0.3 s; before the seek the position was under 1 s.
	pos, _ := mpvtest.Get(t, sock, "time-pos").(float64)
	if math.Abs(pos-12) > 0.3 {
		t.Fatalf("after seek mpv's time-pos is %v", pos)
	}
	if mpvtest.Get(t, sock, "pause") != true {
		t.Fatal("seek unpaused the player")
	}
	seeked := state()
	if r.ContentHashBefore != StateHash(paused) || r.ContentHashAfter != StateHash(seeked) {
		t.Fatalf("seek hashes do not match the device states %s → %s", paused, seeked)
	}
	var st MPVState
	if err := json.Unmarshal(seeked, &st); err != nil || st.TimePos == nil || math.Abs(*st.TimePos-pos) > 0.001 {
		t.Fatalf("seeked state %s does not carry mpv's time-pos %v", seeked, pos)
	}

	// mpv may still settle the paused position after it answered the seek
	// (time-pos has moved by a few hundredths), so the state the stop starts
	// from is read once it holds still: the same over four reads in a row
	// (one matching read was not enough on a loaded machine).
	for same, deadline := 0, time.Now().Add(10*time.Second); same < 3 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		again := state()
		if string(again) == string(seeked) {
			same++
			continue
		}
		seeked, same = again, 0
	}

	// Stop: idle, nothing loaded.
	r = h.run(h.manifest("m-stop", CapStop, `{"target_device":"speaker"}`))
	if r.Status != task.StatusSuccess {
		t.Fatalf("stop: %+v", r.Error)
	}
	if mpvtest.Get(t, sock, "idle-active") != true || mpvtest.Get(t, sock, "path") != nil {
		t.Fatal("after stop mpv is not idle")
	}
	stopped := state()
	if r.ContentHashBefore != StateHash(seeked) || r.ContentHashAfter != StateHash(stopped) {
		t.Fatal("stop hashes do not match the device states")
	}
	// Stopping an idle player is a success that changes nothing.
	r = h.run(h.manifest("m-stop2", CapStop, `{"target_device":"speaker"}`))
	if r.Status != task.StatusSuccess || r.ContentHashBefore != r.ContentHashAfter {
		t.Fatalf("second stop: %+v", r)
	}

	// mpv refuses to seek with nothing loaded: a final EXECUTION_FAILED.
	r = h.run(h.manifest("m-seek-idle", CapSeek, `{"target_device":"speaker","position_seconds":3}`))
	wantFailure(t, r, task.ExecutionFailed, "mpv: seek: error running command")

	// A file that does not exist is refused before anything is sent.
	r = h.run(h.manifest("m-missing", CapPlay, `{"target_device":"speaker","media_uri":"`+filepath.Join(dir, "nope.wav")+`"}`))
	wantFailure(t, r, task.ExecutionFailed, "is not accessible to the device")

	// A file mpv cannot decode fails with mpv's own reason.
	junk := filepath.Join(dir, "junk.wav")
	os.WriteFile(junk, []byte("not audio at all"), 0o600)
	r = h.run(h.manifest("m-junk", CapPlay, `{"target_device":"speaker","media_uri":"`+junk+`"}`))
	wantFailure(t, r, task.ExecutionFailed, "mpv: could not load")
}

func TestMPVRefusesForeignCommands(t *testing.T) {
	m, _ := NewMPV("x", "/nonexistent/mpv.sock")
	for _, body := range []string{
		`{"command":["run","sh","-c","touch /tmp/pwned"]}`,
		`{"command":["cycle","pause"]}`,
		`{"command":["seek",5,"relative"]}`,
		`{"command":["loadfile","/a.wav","append-play"]}`,
		`{"command":["stop"],"async":true}`,
	} {
		err := m.Do(context.Background(), Plan{Method: "IPC", URL: "unix:///nonexistent/mpv.sock", Body: []byte(body + "\n")})
		if err == nil || IsTransient(err) {
			t.Errorf("%s: %v", body, err)
		}
	}
	// mpv not running: a transient error, retried per policy.
	err := m.Do(context.Background(), Plan{Method: "IPC", URL: "unix:///nonexistent/mpv.sock", Body: []byte(`{"command":["stop"]}` + "\n")})
	if !IsTransient(err) {
		t.Fatalf("connect failure: %v", err)
	}
}
