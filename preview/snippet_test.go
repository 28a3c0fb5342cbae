package preview

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSnippetMasksBeforeCutting moves each key across the cut one byte at a
// time: no window may show a run of it that masking would have caught whole.
func TestSnippetMasksBeforeCutting(t *testing.T) {
	keys := []string{
		"sk-" + "proj-T3BlbkFJq9Zt4LmW2xKp7RvB3nYc8HdF6sJa1GeU5o",
		"ghp_" + "q9Zt4LmW2xKp7RvB3nYc8HdF6sJa1GeU5oTi",
		"xo" + "xb-2463752135-9183746502-q9Zt4LmW2xKp7RvB3nYc",
	}
	const max = 60
	for _, key := range keys {
		for pad := 0; pad <= max; pad++ {
			body := strings.Repeat("é", pad/2) + strings.Repeat(" ", pad%2) + " key " + key + " was refused"
			got := Snippet(body, max)
			if len(got) > max+len("…") || !utf8.ValidString(got) {
				t.Fatalf("pad %d: %q is not a cut of at most %d bytes", pad, got, max)
			}
			for n := 8; n <= len(key); n++ {
				for i := 0; i+n <= len(key); i += n {
					if strings.Contains(got, key[i:i+n]) {
						t.Fatalf("pad %d: %q shows %q", pad, got, key[i:i+n])
					}
				}
			}
		}
	}
}

func TestSnippetKnownSecretsAndOneLine(t *testing.T) {
	got := Snippet("line one\n\tpassword rejected: q9Zt4LmW2x\r\nend", 200, "q9Zt4LmW2x")
	if got != "line one password rejected: ******** end" {
		t.Fatalf("%q", got)
	}
	// A cut inside a word drops the word's start: no fragment of an
	// unrecognised token is left at the edge.
	if got := Snippet("token was 7f3a9c2e41b8d6f05a7c3e9b", 20); got != "token was…" {
		t.Fatalf("%q", got)
	}
	if got := Snippet("short", 20); got != "short" {
		t.Fatalf("%q", got)
	}
}
