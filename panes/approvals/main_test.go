package approvalspane

import (
	"os"
	"testing"
	"time"
)

// TestMain shows local times (rules.Describe's "until Nov 22 10:15") in
// UTC, as the goldens were made, whatever the machine's zone; set before
// any test starts a goroutine that reads the clock.
func TestMain(m *testing.M) {
	time.Local = time.UTC
	os.Exit(m.Run())
}
