package safetext

import (
	"strings"
	"testing"
)

// TestFullwidthHostShowsItsUTS46Mapping: resolvers (browsers, Go's own
// client) map ｇｏｏｇｌｅ.com to google.com; showing only its punycode told
// the person a name nobody looks up (issue 36, item 13).
func TestFullwidthHostShowsItsUTS46Mapping(t *testing.T) {
	cases := map[string]string{
		"ｇｏｏｇｌｅ.com":       "google.com",
		"ＡＰＰＬＥ.com":        "apple.com",
		"google。com":       "google.com", // ideographic full stop
		"g\u00adoogle.com": "google.com", // soft hyphen, ignored
	}
	for host, want := range cases {
		if h := InspectHost(host); h.Mapped != want {
			t.Errorf("InspectHost(%q).Mapped = %q, want %q", host, h.Mapped, want)
		}
		w := strings.Join(URLWarnings("https://"+host+"/x"), "|")
		if !strings.Contains(w, "looked up as "+want) {
			t.Errorf("warnings for %q = %q: no mapping to %s", host, w, want)
		}
	}
	// Hosts UTS-46 leaves alone have no mapping to show.
	for _, host := range []string{"example.com", "bücher.de", "pаypal.com", "xn--pple-43d.com"} {
		if h := InspectHost(host); h.Mapped != "" {
			t.Errorf("InspectHost(%q).Mapped = %q, want none", host, h.Mapped)
		}
	}
}

// TestNumericHostIsNamed: a host written as one number, in hex or in octal
// is an IPv4 address to resolvers that read it as inet_aton does; the
// person is told which.
func TestNumericHostIsNamed(t *testing.T) {
	cases := map[string]string{
		"http://2130706433/":       "127.0.0.1",
		"http://0x7f.1/":           "127.0.0.1",
		"http://0x7f000001/":       "127.0.0.1",
		"http://0177.0.0.1/":       "127.0.0.1",
		"http://127.1/":            "127.0.0.1",
		"http://3232235777:8123/x": "192.168.1.1",
		"http://１２７.０.０.１/":        "127.0.0.1",
		"http://10.0.0.1./":        "10.0.0.1",
	}
	for raw, want := range cases {
		w := strings.Join(URLWarnings(raw), "|")
		if !strings.Contains(w, "numeric address "+want) {
			t.Errorf("URLWarnings(%q) = %q: no numeric address %s", raw, w, want)
		}
	}
	for _, raw := range []string{"http://127.0.0.1/", "http://192.168.1.20:8123/", "http://1e100.net/",
		"http://0x.example/", "http://4294967296/", "http://1.2.3.4.5/", "http://08.1.1.1/", "http://[::1]/"} {
		if w := URLWarnings(raw); w != nil {
			t.Errorf("URLWarnings(%q) = %q, want none", raw, w)
		}
	}
}
