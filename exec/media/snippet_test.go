package media

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// leakedRun is the longest run of key (at least min bytes) found in s, or "".
func leakedRun(s, key string, min int) string {
	for n := len(key); n >= min; n-- {
		for i := 0; i+n <= len(key); i++ {
			if strings.Contains(s, key[i:i+n]) {
				return key[i : i+n]
			}
		}
	}
	return ""
}

// TestHassErrorMasksBeforeCutting: Home Assistant's reason is cut to 300
// bytes; a secret straddling the cut must be masked whole first, or its
// first part (no longer a recognisable shape) is shown (issue 36, item 1).
func TestHassErrorMasksBeforeCutting(t *testing.T) {
	secrets := []string{
		hassToken, // the driver's own token, echoed back
		"ghp_" + "q9Zt4LmW2xKp7RvB3nYc8HdF6sJa1GeU5oTi", // a vendor shape in the answer
	}
	for _, secret := range secrets {
		for shift := 240; shift <= 300; shift += 5 {
			msg := strings.Repeat("y", shift) + " bad credential " + secret + " rejected"
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(`{"message":"` + msg + `"}`))
			}))
			hs, err := NewHass("k", srv.URL, "media_player.k", "T", "", func(string) string { return hassToken }, nil)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := hs.Plan(Action{Capability: CapPause})
			err = hs.Do(context.Background(), p)
			srv.Close()
			if err == nil {
				t.Fatal("a 400 counted as success")
			}
			if run := leakedRun(err.Error(), secret, 6); run != "" {
				t.Fatalf("shift %d: %q of the secret reached the error: %s", shift, run, err)
			}
		}
	}
}

// TestMPVBadReplyMasksBeforeCutting: a reply line that is not JSON is quoted
// in the error, cut to 80 bytes; a key in it is masked before the cut.
func TestMPVBadReplyMasksBeforeCutting(t *testing.T) {
	key := "sk-" + "proj-T3BlbkFJq9Zt4LmW2xKp7RvB3nYc8HdF6sJa1GeU5o"
	for shift := 30; shift <= 80; shift += 5 {
		a, b := net.Pipe()
		go func() {
			_, _ = b.Write([]byte(strings.Repeat("z", shift) + " " + key + " not json\n"))
			b.Close()
		}()
		mc := &mpvConn{c: a, r: bufio.NewReader(a), nextID: 1}
		_, err := mc.readMsg(context.Background())
		a.Close()
		if err == nil {
			t.Fatal("a bad reply was accepted")
		}
		if run := leakedRun(err.Error(), key, 6); run != "" {
			t.Fatalf("shift %d: %q of the key reached the error: %s", shift, run, err)
		}
	}
}

// TestUnknownFieldNameMasksBeforeCutting: an unknown input field's name is
// quoted back cut to 64 bytes; a key used as the name is masked first.
func TestUnknownFieldNameMasksBeforeCutting(t *testing.T) {
	key := "ghp_" + strings.Repeat("q9Zt4LmW2x", 4)
	for shift := 20; shift <= 64; shift += 4 {
		name := strings.Repeat("f", shift) + "_" + key
		_, err := ParseInputs(CapPause, []byte(`{"target_device":"living-room","`+name+`":1}`), []string{"living-room"})
		if err == nil {
			t.Fatal("an unknown field was accepted")
		}
		if run := leakedRun(err.Error(), key, 8); run != "" {
			t.Fatalf("shift %d: %q of the key reached the error: %s", shift, run, err)
		}
	}
}
