package search

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGoldenResponseJSON(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "notes/todo.md", "- fix the \"parser\"\n- ship it\n")
		write(t, root, "main.go", "package main\n// TODO: parser\n")
		r := search(t, be, root, `{"pattern":"parser","context":1}`)
		got := strings.ReplaceAll(string(r.AppendJSON(nil)), root, "$ROOT") + "\n"
		golden := filepath.Join("testdata", "response.golden.json")
		if *update {
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Fatalf("got\n%s\nwant\n%s", got, want)
		}
	})
}
