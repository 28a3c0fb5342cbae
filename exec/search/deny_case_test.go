package search

import (
	"slices"
	"strings"
	"testing"
)

// Issue 18 item 5: deny globs match names case-insensitively. On a
// case-insensitive file system ".ENV" is ".env", and a request for it
// opens the real one; elsewhere a secret may simply be spelled in capitals.

func TestDenyGlobFoldsCase(t *testing.T) {
	cases := []struct {
		glob  string
		match []string // must match
		not   []string // must not match
	}{
		{"**/.env", []string{".env", ".ENV", "a/.Env", "b/c/.eNv"}, []string{".envx", "x.env", ".en"}},
		{"**/*.pem", []string{"key.pem", "KEY.PEM", "a/Key.Pem", "ſ.PEM"}, []string{"key.pemx", "pem"}},
		{"**/id_*", []string{"id_rsa", "Id_rsa", "ID_ED25519", "a/iD_x"}, []string{"xid_rsa", "id"}},
		{"**/.ssh/", []string{".ssh", ".SSH", "a/.Ssh", ".ſsh"}, []string{".sshx", "ssh"}},
		{".git/", []string{".git", ".GIT", "a/.Git"}, []string{".gitx"}},
		{"secrets/*.yml", []string{"secrets/a.yml", "SECRETS/A.YML"}, []string{"x/secrets/a.yml"}},
		{"**/Kube*", []string{"kubeconfig", "KUBE", "\u212aube"}, []string{"kub"}},
		{"**/café", []string{"café", "CAFÉ"}, []string{"cafe"}},
	}
	for _, c := range cases {
		set, err := compileDeny([]string{c.glob})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range c.match {
			if !set.matchAncestors(name, strings.HasSuffix(c.glob, "/")) {
				t.Errorf("%q must deny %q", c.glob, name)
			}
		}
		for _, name := range c.not {
			if set.matchAncestors(name, strings.HasSuffix(c.glob, "/")) {
				t.Errorf("%q must not deny %q", c.glob, name)
			}
		}
		// Include and exclude globs keep matching case as written.
		plain, _ := compileSet([]string{c.glob})
		if plain.match(strings.ToUpper(c.match[0]), strings.HasSuffix(c.glob, "/")) && strings.ToUpper(c.match[0]) != c.match[0] {
			t.Errorf("%q as an include/exclude glob matched %q", c.glob, strings.ToUpper(c.match[0]))
		}
	}
}

func TestFoldGlob(t *testing.T) {
	for _, c := range []struct{ glob, class, brace string }{
		{"**/.env", "**/.[eE][nN][vV]", "**/.{e,E}{n,N}{v,V}"},
		{"**/.ssh/", "**/.[sſS][sſS][hH]/", "**/.{s,ſ,S}{s,ſ,S}{h,H}/"},
		{"*_1.pem", "*_1.[pP][eE][mM]", "*_1.{p,P}{e,E}{m,M}"},
	} {
		if got := foldGlob(c.glob, false); got != c.class {
			t.Errorf("foldGlob(%q, classes) = %q, want %q", c.glob, got, c.class)
		}
		if got := foldGlob(c.glob, true); got != c.brace {
			t.Errorf("foldGlob(%q, braces) = %q, want %q", c.glob, got, c.brace)
		}
	}
}

// hostileNames are spellings of what the default deny list covers.
var hostileNames = []string{".ENV", "KEY.PEM", "Id_rsa", "sub/.Env", "sub/Cert.Pem", ".SSH/config", "a/.Ssh/known_hosts",
	".GIT/config", ".ſsh/config", "ID_ED25519"}

func hostileTree(t *testing.T) string {
	root := t.TempDir()
	for _, n := range hostileNames {
		write(t, root, n, "secret\n")
	}
	write(t, root, "ok.txt", "secret\n")
	return root
}

// Through both real backends, on the walks and on the ordered path: only
// ok.txt is searched.
func TestDenyIgnoresCaseBothBackends(t *testing.T) {
	root := hostileTree(t)
	eachBackend(t, func(t *testing.T, be string) {
		for _, req := range []string{`{"pattern":"secret","hidden":true}`, `{"pattern":"secret","hidden":true,"context":1}`} {
			for _, stream := range []bool{false, true} {
				var emit func(Batch)
				if stream {
					emit = func(Batch) {} // the ordered path
				}
				resp, err := searchEmit(be, root, req, emit)
				if err != nil {
					t.Fatal(err)
				}
				if got := paths(resp); !slices.Equal(got, []string{"ok.txt"}) || resp.FilesScanned != 1 {
					t.Errorf("%s stream=%v: searched %v (files_scanned %d), want only ok.txt", req, stream, got, resp.FilesScanned)
				}
			}
		}
		// A request naming a denied file in another case is refused.
		for _, n := range []string{".ENV", "KEY.PEM", "Id_rsa", ".SSH/config"} {
			if _, err := searchErr(be, root, `{"pattern":"secret","path":"`+n+`"}`); err == nil {
				t.Errorf("path %q was searched", n)
			}
		}
	})
}

// What each backend is told to walk leaves out every spelling: the
// backend never even reads them (the walker filtering its answer would
// hide a match, not the read).
func TestDenyIgnoresCaseInBackendWalks(t *testing.T) {
	root := hostileTree(t)
	need(t, "rg")
	onlyRG, onlyWalker := walkFileSets(t, root, `{"pattern":"x","hidden":true}`, nil)
	if len(onlyRG) > 0 || len(onlyWalker) > 0 {
		t.Errorf("rg walk: only rg %v, only walker %v", onlyRG, onlyWalker)
	}
	need(t, "ugrep")
	onlyUg, onlyW, eligible := ugrepFileSets(t, root, `{"pattern":"x","hidden":true}`, nil)
	if !eligible {
		t.Fatal("the ugrep walk refused the default deny list")
	}
	if len(onlyUg) > 0 || len(onlyW) > 0 {
		t.Errorf("ugrep walk: only ugrep %v, only walker %v", onlyUg, onlyW)
	}
}
