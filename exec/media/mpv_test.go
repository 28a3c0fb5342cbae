package media

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/task"
)

// writeWAV writes seconds of a quiet 440 Hz tone, 8 kHz mono 8-bit PCM.
func writeWAV(t *testing.T, path string, seconds int) {
	t.Helper()
	const rate = 8000
	n := rate * seconds
	data := make([]byte, 44+n)
	copy(data[0:], "RIFF")
	binary.LittleEndian.PutUint32(data[4:], uint32(36+n))
	copy(data[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(data[16:], 16)
	binary.LittleEndian.PutUint16(data[20:], 1) // PCM
	binary.LittleEndian.PutUint16(data[22:], 1) // mono
	binary.LittleEndian.PutUint32(data[24:], rate)
	binary.LittleEndian.PutUint32(data[28:], rate)
	binary.LittleEndian.PutUint16(data[32:], 1)
	binary.LittleEndian.PutUint16(data[34:], 8)
	copy(data[36:], "data")
	binary.LittleEndian.PutUint32(data[40:], uint32(n))
	for i := 0; i < n; i++ {
		data[44+i] = byte(128 + 20*math.Sin(2*math.Pi*440*float64(i)/rate))
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// startMPV runs a headless mpv and waits until its socket answers.
func startMPV(t *testing.T, sock string) {
	t.Helper()
	bin, err := exec.LookPath("mpv")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mpv is required in CI: %v", err)
		}
		t.Skip("mpv not installed")
	}
	cmd := exec.Command(bin, "--idle=yes", "--input-ipc-server="+sock, "--vo=null", "--ao=null",
		"--no-terminal", "--no-config", "--really-quiet")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("mpv did not open its IPC socket")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// mpvGet asks mpv for a property over a connection of the test's own, so
// the assertions do not rest on the driver's reading code.
func mpvGet(t *testing.T, sock, prop string) any {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(`{"command":["get_property","` + prop + `"],"request_id":99}` + "\n")); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		var msg map[string]any
		if json.Unmarshal(sc.Bytes(), &msg) == nil && msg["request_id"] == float64(99) {
			if msg["error"] != "success" {
				return nil
			}
			return msg["data"]
		}
	}
	t.Fatalf("no reply for %s: %v", prop, sc.Err())
	return nil
}

func TestMPVRealPlayer(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "mpv.sock")
	wav := filepath.Join(dir, "tone.wav")
	writeWAV(t, wav, 30)
	startMPV(t, sock)

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
	if got := mpvGet(t, sock, "path"); got != wav {
		t.Fatalf("after play mpv's path is %v", got)
	}
	if mpvGet(t, sock, "pause") != false || mpvGet(t, sock, "idle-active") != false {
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
	if mpvGet(t, sock, "pause") != true {
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
	pos, _ := mpvGet(t, sock, "time-pos").(float64)
	if math.Abs(pos-12) > 0.3 {
		t.Fatalf("after seek mpv's time-pos is %v", pos)
	}
	if mpvGet(t, sock, "pause") != true {
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

	// Stop: idle, nothing loaded.
	r = h.run(h.manifest("m-stop", CapStop, `{"target_device":"speaker"}`))
	if r.Status != task.StatusSuccess {
		t.Fatalf("stop: %+v", r.Error)
	}
	if mpvGet(t, sock, "idle-active") != true || mpvGet(t, sock, "path") != nil {
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
