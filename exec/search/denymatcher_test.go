package search

import "testing"

// TestDenyMatcherAgreesWithTheSearch: the matcher a screen uses for path
// completion hides what a search refuses, case-insensitively and by ancestor.
func TestDenyMatcherAgreesWithTheSearch(t *testing.T) {
	denied, err := DenyMatcher([]string{"**/.ssh/**", "secrets", "*.pem"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rel   string
		isDir bool
		want  bool
	}{
		{"home/.ssh/config", false, true},
		{"home/.SSH/id_rsa", false, true},
		{"secrets", true, true},
		{"Secrets/x.txt", false, true},
		{"keys/server.PEM", false, true},
		{"src", true, false},
		{"src/main.go", false, false},
	} {
		if got := denied(c.rel, c.isDir); got != c.want {
			t.Errorf("denied(%q, dir=%v) = %v, want %v", c.rel, c.isDir, got, c.want)
		}
	}
	if _, err := DenyMatcher([]string{"[unclosed"}); err == nil {
		t.Error("a glob that does not compile was accepted")
	}
}
