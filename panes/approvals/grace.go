package approvalspane

import "time"

// The grace period after a prompt appears or a task slides under the cursor
// (crush's numbers): keys are swallowed until typing pauses for GraceQuiet,
// and never for longer than GraceMax, so a person who keeps typing cannot
// answer a prompt they have not read, and one who stops gets the keyboard
// back quickly.
const (
	GraceQuiet = 425 * time.Millisecond
	GraceMax   = 1500 * time.Millisecond
)

// grace swallows keys for a while after something changed under the person.
// The zero value swallows nothing. It reads no clock: callers pass now.
type grace struct {
	quietUntil time.Time // moved forward by every swallowed key
	hardUntil  time.Time // the ceiling, fixed when armed
}

// arm starts a grace period at now (restarting any running one).
func (g *grace) arm(now time.Time) {
	g.quietUntil, g.hardUntil = now.Add(GraceQuiet), now.Add(GraceMax)
}

// active reports whether a key at now would be swallowed, without counting it.
func (g *grace) active(now time.Time) bool {
	return now.Before(g.quietUntil) && now.Before(g.hardUntil)
}

// swallow reports whether a key at now is swallowed; a swallowed key
// restarts the quiet period, up to the ceiling.
func (g *grace) swallow(now time.Time) bool {
	if !g.active(now) {
		return false
	}
	g.quietUntil = now.Add(GraceQuiet)
	if g.quietUntil.After(g.hardUntil) {
		g.quietUntil = g.hardUntil
	}
	return true
}
