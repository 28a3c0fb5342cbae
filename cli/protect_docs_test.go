package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/internal/homeguard"
)

// TestProtectPageMatchesTheProgram: docs/protect.md's samples are what
// the program prints: each check its doctor sample shows is one doctor
// makes, the refusal is serve's words, and the unit it installs exists.
func TestProtectPageMatchesTheProgram(t *testing.T) {
	b, err := os.ReadFile("../docs/protect.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	_, home := tightHome(t, "")
	cs, _ := doctorReport(t, home)
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	shown := regexp.MustCompile(`(?m)^(?:ok  |FAIL) ([a-z-]+) +`).FindAllStringSubmatch(page, -1)
	if len(shown) < 6 {
		t.Fatalf("docs/protect.md shows %d doctor lines", len(shown))
	}
	for _, m := range shown {
		if !slices.Contains(names, m[1]) {
			t.Errorf("docs/protect.md shows a doctor check %q; doctor makes %q", m[1], names)
		}
	}
	if err := os.Chmod(home, 0o770); err != nil {
		t.Fatal(err)
	}
	_, errs, _ := runReal(t, home, "serve")
	first, _, _ := strings.Cut(errs, home)
	if !strings.Contains(page, strings.Replace(first, "other accounts than "+homeguard.Account(homeguard.UID()), "other accounts than vigil", 1)) {
		t.Errorf("docs/protect.md does not quote serve's refusal %q", first)
	}
	if _, err := os.Stat(filepath.Join("..", unitFile[3:])); err != nil || !strings.Contains(page, "deploy/vigil.service") {
		t.Errorf("docs/protect.md and the unit: %v", err)
	}
}
