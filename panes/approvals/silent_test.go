package approvalspane

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
)

// The demo's kitchen speaker is a Home Assistant device nobody answers at
// (cli/demo.go): its preview and the approve prompt say the device did not
// answer and approving will likely fail, and the prompt still opens.
func TestSilentDeviceIsSaidBeforeApproving(t *testing.T) {
	env := approvaltest.New(t, config.DeviceConfig{ID: "kitchen", Driver: "hass", BaseURL: "http://127.0.0.1:9/",
		EntityID: "media_player.kitchen", TokenEnv: "HASS_TOKEN"})
	env.Submit(env.Manifest("kitchen-pause", "MEDIA_PAUSE", map[string]any{"target_device": "kitchen"}, time.Hour))
	s := start(t, env, 120, 40, silentWarning)
	env.Clock.Advance(2 * time.Second)
	s.key("a")
	s.waitFn(func(b []byte) bool {
		flat := strings.Join(strings.Fields(string(b)), " ")
		at := strings.Index(flat, "Approve kitchen-pause?")
		return at >= 0 && strings.LastIndex(flat, silentWarning) > at // in the prompt, under its question
	})
	// the prompt is open: y would approve (the engine then tries the
	// device, with its retries, and records the failure)
	s.key("n")
	s.final()
}

// Only a failed state read is called silent: a device that answered, and
// an effect without the device's state, are not.
func TestDeviceSilentReadsTheEnginesWords(t *testing.T) {
	for effect, want := range map[string]bool{
		"now: unknown (Get \"http://127.0.0.1:9/api/states/x\": connection refused) → Pause kitchen": true,
		"now: idle → Play /media/a.mkv on living-room":                                               false,
		"Pause kitchen": false,
	} {
		if got := deviceSilent(effect); got != want {
			t.Errorf("deviceSilent(%q) = %v", effect, got)
		}
	}
}
