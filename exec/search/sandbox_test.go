package search

// Regression tests from a security and validation review of search: each
// case once leaked a denied or outside file, ran a command, or accepted a
// request the schema rejects; the last one keeps the probes that found
// nothing.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bothPaths runs req on both run paths: Run with emit == nil (rg walk when
// eligible) and with emit != nil (ordered path).
func bothPaths(t *testing.T, be string, opts Options, reqJSON string, fn func(t *testing.T, resp Response, err error)) {
	t.Helper()
	req, err := DecodeRequest([]byte(reqJSON))
	if err != nil {
		t.Fatalf("decode %s: %v", reqJSON, err)
	}
	opts.Backend = be
	for _, ordered := range []bool{false, true} {
		name := "walk"
		var emit func(Batch)
		if ordered {
			name, emit = "ordered", func(Batch) {}
		}
		t.Run(name, func(t *testing.T) {
			resp, err := Run(context.Background(), req, opts, emit)
			fn(t, resp, err)
		})
	}
}

func dump(r Response) string {
	return eventsJSON(r) + " errors=" + mustJSON(r.Errors) + " stderr=" + r.Stderr
}

// A broken symlink named like a denied file (id_rsa, .env) was once
// reported in errors[] under its denied name when follow was set.
func TestBrokenLinkWithDeniedNameIsNotReported(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "a.txt", "needle\n")
		if err := os.Symlink("missing-target", filepath.Join(root, "id_rsa")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("missing-target", filepath.Join(root, ".env")); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("nowhere", filepath.Join(root, "sub", "server.pem")); err != nil {
			t.Fatal(err)
		}
		bothPaths(t, be, DefaultOptions(root), `{"pattern":"needle","follow":true,"hidden":true}`, func(t *testing.T, resp Response, err error) {
			if err != nil {
				t.Fatal(err)
			}
			d := dump(resp)
			for _, bad := range []string{"id_rsa", ".env", "server.pem"} {
				if strings.Contains(d, bad) {
					t.Errorf("denied name %q shown: %s", bad, d)
				}
			}
		})
	})
}

// A .gitignore that is a symlink to a file outside the sandbox was once
// read: its lines decided which sandbox files were searched.
func TestIgnoreFileLinkedOutsideSandboxIsNotRead(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		base := t.TempDir()
		root := filepath.Join(base, "sb")
		outside := filepath.Join(base, "outside-ignore")
		write(t, base, "outside-ignore", "secret.txt\n")
		write(t, root, "secret.txt", "needle\n")
		write(t, root, "other.txt", "needle\n")
		if err := os.Symlink(outside, filepath.Join(root, ".gitignore")); err != nil {
			t.Fatal(err)
		}
		bothPaths(t, be, DefaultOptions(root), `{"pattern":"needle"}`, func(t *testing.T, resp Response, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(paths(resp), ","); got != "other.txt,secret.txt" {
				t.Errorf("outside-sandbox ignore file was read and applied: files %q, want other.txt,secret.txt", got)
			}
		})
	})
}

// A .gitignore symlinked to the denied .env once turned its lines into
// ignore rules: which file names vanished from results revealed .env's lines.
func TestIgnoreFileLinkedToDeniedFileIsNotRead(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, ".env", "API_KEY=hunter2\n")
		write(t, root, "API_KEY=hunter2", "needle\n") // guess 1: right
		write(t, root, "API_KEY=wrong", "needle\n")   // guess 2: wrong
		if err := os.Symlink(".env", filepath.Join(root, ".gitignore")); err != nil {
			t.Fatal(err)
		}
		bothPaths(t, be, DefaultOptions(root), `{"pattern":"needle"}`, func(t *testing.T, resp Response, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(paths(resp), ","); got != "API_KEY=hunter2,API_KEY=wrong" {
				t.Errorf("denied .env content leaks through a symlinked .gitignore: files %q", got)
			}
		})
	})
}

// path naming a denied file: the answer once differed by whether it
// existed, so the caller learned which secrets exist.
func TestDeniedPathAnswerDoesNotTellExistence(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".env", "x\n")
	write(t, root, ".ssh/id_rsa", "x\n")
	write(t, root, "a.txt", "x\n")
	msg := func(p string) string {
		_, err := searchErr("", root, `{"pattern":"x","path":`+mustJSON(p)+`}`)
		if err == nil {
			return "<nil>"
		}
		return err.Error()
	}
	for _, pair := range [][2]string{{".env", "sub/.env"}, {".ssh/id_rsa", ".ssh/id_ed25519"}, {".git/config", ".git/HEAD"}} {
		a, b := msg(pair[0]), msg(pair[1])
		t.Logf("%s -> %s\n%s -> %s", pair[0], a, pair[1], b)
		if !strings.Contains(b, "denied") {
			t.Errorf("denied path %q (absent) answered %q, not as denied; existing %q answered %q", pair[1], b, pair[0], a)
		}
	}
}

// An error message once named where a dangling symlink in the path points,
// outside the sandbox.
func TestPathErrorDoesNotNameOutsideLinkTarget(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "sb")
	write(t, root, "a.txt", "x\n")
	secret := filepath.Join(base, "outside-secret-dir-name", "deeper")
	if err := os.Symlink(secret, filepath.Join(root, "lnk")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"lnk", "lnk/x"} {
		_, err := searchErr("", root, `{"pattern":"x","path":`+mustJSON(p)+`}`)
		if err == nil {
			t.Fatalf("%s: no error", p)
		}
		if strings.Contains(err.Error(), "outside-secret-dir-name") {
			t.Errorf("path %q: error reveals a path outside the sandbox: %v", p, err)
		}
	}
}

// An absolute path spelled through the (symlinked) sandbox root is
// canonicalized before the containment check (Appendix A step 3).
func TestAbsolutePathThroughSymlinkedRoot(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	write(t, real, "sub/a.txt", "needle\n")
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions(link)
	req := Request{Pattern: "needle", Path: Ptr(filepath.Join(link, "sub"))}
	if _, err := Run(context.Background(), req, opts, nil); err != nil {
		t.Errorf("path %q inside the sandbox root %q (a symlink): %v", *req.Path, link, err)
	}
}

// A deny glob written in NFC must deny the same name stored in NFD, which
// the result would show in NFC, textually matching the deny glob.
func TestDenyCoversNFDVariant(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "cafe\u0301.key", "needle\n") // NFD on disk
		write(t, root, "a.txt", "needle\n")
		opts := DefaultOptions(root)
		opts.Deny = append(opts.Deny, "**/caf\u00e9.key") // NFC in config
		bothPaths(t, be, opts, `{"pattern":"needle"}`, func(t *testing.T, resp Response, err error) {
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range paths(resp) {
				if strings.HasPrefix(p, "caf") {
					t.Errorf("NFD variant of denied name shown as %q", p)
				}
			}
		})
	})
}

// Probes that found no problem (kept as regression checks).
func TestSandboxPathAndGlobProbes(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		base := t.TempDir()
		root := filepath.Join(base, "sb")
		write(t, base, "outside.txt", "needle outside\n")
		write(t, root, "a.txt", "needle a\n")
		write(t, root, ".env", "needle env\n")
		write(t, root, "sub/.env", "needle env\n")
		write(t, root, ".git/config", "needle git\n")
		write(t, root, "k/id_rsa", "needle key\n")
		write(t, root, "c.pem", "needle pem\n")
		write(t, root, ".gitignore", "!.env\n!id_rsa\n")
		os.Symlink(filepath.Join(base, "outside.txt"), filepath.Join(root, "out-link"))
		os.Symlink(".env", filepath.Join(root, "env-link"))
		os.Symlink(".git", filepath.Join(root, "git-link"))
		os.Symlink(base, filepath.Join(root, "up-link"))
		for _, p := range []string{"../outside.txt", base + "/outside.txt", "out-link", "env-link", ".env", ".env/", "./.env", "sub/../.env",
			".git/config", ".git/", "git-link/config", "up-link/outside.txt", "k/id_rsa", "c.pem", "sub/.env", "sub//.env", "/", "..", "up-link"} {
			_, err := searchErr(be, root, `{"pattern":"needle","path":`+mustJSON(p)+`}`)
			if err == nil {
				t.Errorf("path %q accepted", p)
			}
		}
		for _, req := range []string{
			`{"pattern":"needle","hidden":true,"no_ignore":true}`,
			`{"pattern":"needle","hidden":true}`,
			`{"pattern":"needle","hidden":true,"follow":true}`,
			`{"pattern":"needle","hidden":true,"include_glob":[".env","**/.env","*.pem","**/id_rsa",".git/**"]}`,
			`{"pattern":"needle","hidden":true,"exclude_glob":["!.env","!**/.env"]}`,
			`{"pattern":"needle","hidden":true,"context":5}`,
			`{"pattern":"-f/etc/passwd","hidden":true}`,
			`{"pattern":"--pre=cat","hidden":true}`,
		} {
			bothPaths(t, be, DefaultOptions(root), req, func(t *testing.T, resp Response, err error) {
				d := dump(resp)
				for _, bad := range []string{"env", "git", "key", "pem", "outside"} {
					if strings.Contains(d, "needle "+bad) {
						t.Errorf("%s: shows %q: %s", req, bad, d)
					}
				}
			})
		}
	})
}
