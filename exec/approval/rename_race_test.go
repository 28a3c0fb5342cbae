package approval_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	. "github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/internal/atomicfile"
)

// Approving while another program keeps renaming a different manifest.json
// over the stored one: each approval either runs the request as submitted
// or finds it tampered; the replaced request never reaches the device.
func TestApproveWhileTheManifestIsReplaced(t *testing.T) {
	h := newHarness(t)
	for i := 0; i < 15; i++ {
		id := fmt.Sprintf("race-%02d", i)
		h.submit(h.Play(id, "/media/"+id+".mkv"))
		mp := h.taskFile(id, "manifest.json")
		good, _ := os.ReadFile(mp)
		evil := []byte(strings.Replace(string(good), ".mkv", ".evil.mkv", 1))
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; ; j++ {
				select {
				case <-stop:
					return
				default:
				}
				b := good
				if j%2 == 1 {
					b = evil
				}
				atomicfile.Write(mp, b, 0o600)
			}
		}()
		_, _, err := h.q.Decide(context.Background(), id, Decision{Approve: true, By: "operator:ada"})
		close(stop)
		wg.Wait()
		r, _ := h.q.Get(id)
		switch {
		case err == nil && r.State == Done:
		case r.State == Tampered:
		default:
			t.Fatalf("%s: %v, state %s", id, err, r.State)
		}
	}
	if n := h.runs(".evil.mkv"); n != 0 {
		t.Fatalf("a replaced manifest reached the device %d times", n)
	}
}
