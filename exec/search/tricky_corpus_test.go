package search

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// trickyCorpus holds what tends to make two backends disagree.
func trickyCorpus(t *testing.T) string {
	root := t.TempDir()
	files := map[string]string{
		"caf\u00e9.txt":    "needle nfc\n",
		"cafe\u0301.txt":   "needle nfd\n",
		"a+b.txt":          "needle plus\n",
		"-dash.txt":        "needle dash\n",
		"sp ace.txt":       "needle space\n",
		"tab\tname.txt":    "needle tab\n",
		"bad.txt":          "\xfa needle \xfb needle\n",
		"crlf.txt":         "one\r\nneedle crlf\r\nthree\r\n",
		"bin.dat":          "needle\x00binary\n",
		".hidden.txt":      "needle hidden\n",
		"ignored.log":      "needle ignored\n",
		".gitignore":       "*.log\n",
		"dir/deep.txt":     "x\nneedle deep\ny\nneedle again\n",
		"locked.txt":       "needle locked\n",
		"gone.txt":         "needle gone\n",
		".git/config":      "needle git\n",
		"keys/id_rsa":      "needle key\n",
		"Needle upper.txt": "NEEDLE\n",
	}
	for p, c := range files {
		write(t, root, p, c)
	}
	if err := os.Symlink(".", filepath.Join(root, "dir", "loop")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "locked.txt"), 0); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestBackendsAgreeOnTrickyCorpus(t *testing.T) {
	bes := backends(t)
	if len(bes) < 2 {
		t.Skip("needs both backends")
	}
	for _, req := range []string{
		`{"pattern":"needle"}`,
		`{"pattern":"needle","hidden":true,"no_ignore":true,"follow":true,"context":1}`,
		`{"pattern":"NEEDLE","case":"insensitive","word_regexp":true}`,
		`{"pattern":"ne+dle","max_matches_per_file":1}`,
	} {
		var ref string
		for _, be := range bes {
			root := trickyCorpus(t)
			r := search(t, be, root, req)
			got := eventsJSON(r) + mustJSON(r.Errors) + mustJSON(r.FilesScanned)
			if !strings.Contains(got, "locked.txt") || strings.Contains(got, "needle git") || strings.Contains(got, "needle key") || strings.Contains(got, "binary") {
				t.Fatalf("%s %s: sandbox/binary/error handling wrong:\n%s", be, req, got)
			}
			if ref == "" {
				ref = got
			} else if got != ref {
				t.Fatalf("%s differs for %s:\n%s\nvs\n%s", be, req, got, ref)
			}
		}
	}
}
