// Package mpvtest runs a real headless mpv for tests and reads its state over
// a connection of the test's own; it also writes small WAV files to play.
package mpvtest

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"math"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"
)

// WriteWAV writes seconds of a quiet 440 Hz tone, 8 kHz mono 8-bit PCM.
func WriteWAV(t testing.TB, path string, seconds int) {
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

// Start runs a headless mpv and waits until its socket answers.
func Start(t testing.TB, sock string) {
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

// Get asks mpv for a property over a connection of the test's own, so
// the assertions do not rest on the driver's reading code.
func Get(t testing.TB, sock, prop string) any {
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
