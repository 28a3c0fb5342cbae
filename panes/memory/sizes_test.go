package memorypane

import (
	"fmt"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

// The first screen a person sees (the newest memories, the pane on its
// list) at the two sizes the issue names.
func TestGoldenBrowseSizes(t *testing.T) {
	for _, sz := range [][2]int{{120, 36}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			st := demoStore(t)
			s := start(t, New(Options{Store: st, Now: clock}, styles()), sz[0], sz[1])
			s.waitFor(browsing)
			out := s.final()
			mustContain(t, out, "newest memories", "e edit search", "tab next pane")
			golden.RequireEqual(t, out)
		})
	}
}
