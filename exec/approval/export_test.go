package approval

import "context"

// shaHex is exported to the external tests.
var ShaHexForTest = sha256Hex

// ProcessClaimedForTest handles one file already claimed into inbox/processing/.
func ProcessClaimedForTest(q *Queue, name string) (Outcome, bool, error) {
	return q.processClaimed(context.Background(), name)
}
