package approvalspane

import (
	"net/url"
	"strings"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/safetext"
)

// BatchWarnings are why a task may not be approved together with others:
// every warning its preview shows at its top (hidden characters in any
// field, the media URI's and every quoted URI's host warnings), a lease
// that no longer verifies, and a stored request that changed since it was
// submitted. Empty: it may be batch-approved. Already safe to show. The
// Approvals pane's summary and `vigil approve ID ID…` both decide with it,
// so a task excluded on one surface is excluded on the other.
func BatchWarnings(v approval.View) []string {
	warn := viewWarnings(v, hiddenIn(v))
	if !v.LeaseValid {
		warn = append(warn, "lease not valid: "+safetext.Line(v.LeaseError))
	}
	if v.Problem != "" {
		warn = append(warn, "stored request changed: "+safetext.Line(v.Problem))
	}
	return warn
}

// hiddenIn counts the hidden characters of the untrusted fields the
// preview shows (the same fields previewLines lays out).
func hiddenIn(v approval.View) int {
	pv, r := v.Preview, v.Record
	n := safetext.Hidden(pv.URL) + safetext.Hidden(pv.EstimatedEffect)
	for k, val := range pv.Headers {
		n += safetext.Hidden(k) + safetext.Hidden(val)
	}
	if pv.Raw != "" {
		for _, l := range strings.Split(pv.Raw, "\n") {
			n += safetext.Hidden(strings.TrimSuffix(l, "\r"))
		}
	}
	n += safetext.Hidden(r.TaskID) + safetext.Hidden(r.Agent) + safetext.Hidden(r.TokenJTI) + safetext.Hidden(r.Source) +
		safetext.Hidden(r.CapabilityID) + safetext.Hidden(r.Device)
	for _, c := range r.Caps {
		n += safetext.Hidden(c)
	}
	if !v.LeaseValid {
		n += safetext.Hidden(v.LeaseError)
	}
	return n
}

// MediaHost is the host of the media a task's request names, as a person
// should read it (punycode for a name that is not ASCII; masked as the
// preview is), or "" when it names none: a pause, or a local file. It is
// the host of the first URI in the request's body (the request's own URL
// is the device's endpoint, not the media's).
func MediaHost(v approval.View) string {
	for _, l := range strings.Split(v.Preview.Raw, "\n") {
		for _, u := range uriShape.FindAllString(l, -1) {
			pu, err := url.Parse(u)
			if err != nil || pu.Hostname() == "" {
				continue
			}
			h := safetext.InspectHost(pu.Hostname())
			if h.ASCII != "" {
				return safetext.Line(h.ASCII)
			}
			return h.Shown
		}
	}
	return ""
}
