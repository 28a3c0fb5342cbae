// Regression tests from a second review: pattern folding, timeouts, hangs
// on special files, the sandbox with follow, and more agreement between
// the rg walk and the ordered path.
package search

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func lateNULTree(t *testing.T) string {
	root := t.TempDir()
	pad := strings.Repeat("x", 9000) + "\n"
	write(t, root, "late.txt", pad+"p\x00q\n")
	write(t, root, "latew.txt", pad+"\x00foo\x00\n")
	write(t, root, "plain.txt", "p q\nfoo bar\n")
	write(t, root, "bin.bin", "p\x00q\nfoo\n")
	write(t, root, "bom.txt", "\xef\xbb\xbfpq foo\n")
	write(t, root, "big.txt", "p q foo\n"+strings.Repeat("y", 5000)+"\n")
	return root
}

func TestRGWalkAgreesOnPatternsThatMayMatchNUL(t *testing.T) {
	root := lateNULTree(t)
	for _, pat := range []string{`p\sq`, `p[\d\D]q`, `p[\w\W]q`, `p\Wq`, `p[[:^alpha:]]q`, `p\PLq`, `p(?s:.)q`, `p\x00q`, `p[\x00-\x01]q`, `p\pCq`, `p[^a]q`, `(?-u:p\x00q)`, `p\u0000q`, `\bfoo\b`, `^foo$`, `foo`, `p`, `^`, `$`} {
		for _, extra := range []string{``, `,"max_matches_per_file":1`, `,"max_file_size_bytes":5000`, `,"word_regexp":true`, `,"case":"insensitive"`} {
			req := `{"pattern":` + mustJSON(pat) + extra + `}`
			r, _ := DecodeRequest([]byte(req))
			if _, err := prepare(context.Background(), r, DefaultOptions(root)); err != nil {
				t.Logf("REJECTED %s: %v", req, err)
				continue
			}
			expectWalkAgrees(t, root, req)
		}
	}
}

func TestRGWalkAgreesOnFixedWordAndCase(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "a.b a+b (x) [y] a\\b foo_bar foo-bar fooé éfoo foo\n$^ .* x|y\n")
	write(t, root, "b.txt", "A.B FOO Foo\nstraße STRASSE ſ K k\n")
	for _, pat := range []string{`a.b`, `a+b`, `(x)`, `[y]`, `a\b`, `foo`, `.*`, `x|y`, `$^`, `\`, `a.B`, `k`, `s`, `ß`} {
		for _, extra := range []string{``, `,"fixed_strings":true`, `,"word_regexp":true`, `,"fixed_strings":true,"word_regexp":true`, `,"case":"insensitive","fixed_strings":true`, `,"case":"insensitive","word_regexp":true`} {
			req := `{"pattern":` + mustJSON(pat) + extra + `}`
			if _, err := DecodeRequest([]byte(req)); err != nil {
				t.Fatal(err)
			}
			opts := DefaultOptions(root)
			r, _ := DecodeRequest([]byte(req))
			if _, err := prepare(context.Background(), r, opts); err != nil {
				t.Logf("REJECTED %s: %v", req, err)
				continue
			}
			expectWalkAgrees(t, root, req)
		}
	}
}

func TestSpecialFilesAgree(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "needle\n")
	write(t, root, "d/real.txt", "needle\n")
	write(t, root, "empty/.keep", "")
	os.MkdirAll(filepath.Join(root, "emptydir"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(root, "sock"))
	if err == nil {
		defer l.Close()
	}
	os.Symlink("a.txt", filepath.Join(root, "link.txt"))
	os.Symlink("d", filepath.Join(root, "linkdir"))
	os.Symlink("nowhere", filepath.Join(root, "broken"))
	write(t, root, "x.pem/inner.txt", "needle\n")
	write(t, root, "id_dir/inner.txt", "needle\n")
	write(t, root, "env/.env", "needle\n")
	write(t, root, ".ssh", "needle\n")
	for _, req := range []string{`{"pattern":"needle"}`, `{"pattern":"needle","hidden":true}`, `{"pattern":"needle","hidden":true,"no_ignore":true}`, `{"pattern":"needle","recursive":false}`} {
		expectAgree(t, root, req)
	}
}

var _ = json.Marshal

// Smart case turns an all-lowercase pattern insensitive; foldRegex then
// rewrites the hex digits of "\xe9" and the class letter of "\pL" into
// [eE]/[Ll] classes, which both backends reject.
func TestCaseFoldingKeepsEscapes(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "caf\u00e9 Letter\n")
	for _, c := range []struct{ req, want string }{
		{`{"pattern":"caf\\xe9"}`, "caf\u00e9"},   // smart case: insensitive
		{`{"pattern":"caf\\u00e9"}`, "caf\u00e9"}, // smart case: insensitive (rg only: ugrep has no \uHHHH)
		{`{"pattern":"\\pLetter","case":"insensitive"}`, "Letter"},
		{`{"pattern":"caf\\x{e9}"}`, "caf\u00e9"}, // braces: copied verbatim, works
	} {
		for _, be := range backends(t) {
			if be == "ugrep" && strings.Contains(c.req, `\\u`) {
				continue
			}
			r, err := searchErr(be, root, c.req)
			if err != nil {
				t.Errorf("%s %s: %v", be, c.req, err)
				continue
			}
			if r.Count != 1 || r.Matches[0].MatchText != c.want {
				t.Errorf("%s %s: %s", be, c.req, eventsJSON(r))
			}
		}
	}
}

func goSrcDir(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "src")
}

func TestTinyTimeoutsNeitherHangNorPanic(t *testing.T) {
	root := goSrcDir(t)
	for _, be := range backends(t) {
		for _, ms := range []int{1, 5, 20, 60} {
			for _, stream := range []bool{false, true} {
				req, _ := DecodeRequest([]byte(`{"pattern":"func","max_results":100000,"timeout_ms":` + strconv.Itoa(ms) + `}`))
				opts := DefaultOptions(root)
				opts.Backend = be
				var emit func(Batch)
				next := 0
				var streamed []Event
				if stream {
					emit = func(b Batch) {
						if b.Offset != next {
							t.Errorf("%s %dms: batch offset %d, want %d", be, ms, b.Offset, next)
						}
						next += len(b.Events)
						streamed = append(streamed, b.Events...)
					}
				}
				r, err := Run(context.Background(), req, opts, emit)
				if err != nil {
					t.Errorf("%s %dms stream=%v: %v", be, ms, stream, err)
					continue
				}
				if !r.TimedOut {
					t.Logf("%s %dms stream=%v: not timed out, %d matches", be, ms, stream, r.Count)
				}
				if stream && len(streamed) != len(r.Matches) {
					t.Errorf("%s %dms: streamed %d events, response has %d", be, ms, len(streamed), len(r.Matches))
				}
			}
		}
	}
}

func TestBadPatternIsBadArgsEvenWithTinyTimeout(t *testing.T) {
	root := goSrcDir(t)
	for _, be := range backends(t) {
		for _, ms := range []int{1, 2, 5, 10, 30, 60, 120} {
			for _, stream := range []bool{false, true} {
				req, _ := DecodeRequest([]byte(`{"pattern":"a(b","timeout_ms":` + strconv.Itoa(ms) + `}`))
				opts := DefaultOptions(root)
				opts.Backend = be
				var emit func(Batch)
				if stream {
					emit = func(b Batch) { t.Errorf("%s: batch emitted for a bad pattern", be) }
				}
				r, err := Run(context.Background(), req, opts, emit)
				if te, ok := err.(*ToolError); !ok || te.Kind != "BadArgs" {
					t.Errorf("%s timeout_ms=%d stream=%v: err=%v timed_out=%v count=%d, want BadArgs", be, ms, stream, err, r.TimedOut, r.Count)
				}
			}
		}
	}
}

func TestDenyAnchoredWithSubdirPath(t *testing.T) {
	root := t.TempDir()
	write(t, root, "s/secret.txt", "x\n")
	write(t, root, "s/t/secret.txt", "x\n")
	write(t, root, "s/ok.txt", "x\n")
	write(t, root, "s/x.pem/in.txt", "x\n")
	write(t, root, "s/t/.env/in.txt", "x\n")
	for _, deny := range [][]string{{"s/secret.txt"}, {"/s/secret.txt"}, {"s/t"}, {"s/t/"}, {"**/t/*.txt"}, {"*.pem"}, {"**/.env"}, {"s/**/secret.txt"}, {"secret.txt"}, {"t/secret.txt"}} {
		for _, req := range []string{`{"pattern":"x","path":"s"}`, `{"pattern":"x","path":"s","no_ignore":true,"hidden":true}`, `{"pattern":"x","path":"s/t","hidden":true}`} {
			r, _ := DecodeRequest([]byte(req))
			o := DefaultOptions(root)
			o.Deny = deny
			if _, err := prepareUnchecked(r, o); err != nil {
				continue
			}
			onlyRG, onlyW := walkFileSets(t, root, req, deny)
			if len(onlyRG)+len(onlyW) > 0 {
				t.Errorf("deny %q %s: only rg %q, only walker %q", deny, req, onlyRG, onlyW)
			}
		}
	}
}

func TestNewlinePatternsAgree(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "foo\nbar\nbaz qux\n")
	for _, req := range []string{`{"pattern":"foo\nbar"}`, `{"pattern":"foo\nbar","fixed_strings":true}`, `{"pattern":"foo\\nbar"}`, `{"pattern":"foo\n"}`, `{"pattern":"Foo\nbar","fixed_strings":true}`, `{"pattern":"baz\\s"}`, `{"pattern":"qux\\s"}`, `{"pattern":"qux[\\s]"}`, `{"pattern":"qux$"}`} {
		r, _ := DecodeRequest([]byte(req))
		bad := false
		for _, be := range backends(t) {
			o := DefaultOptions(root)
			o.Backend = be
			if _, err := prepare(context.Background(), r, o); err != nil {
				t.Logf("REJECTED %s %s: %.80v", be, req, err)
				bad = true
			}
		}
		if bad {
			continue
		}
		expectAgree(t, root, req)
	}
}

// An ignore file that is a FIFO: the walker's os.ReadFile blocks until a
// writer appears, and Run waits for the walker, so timeout_ms is not kept.
func TestFIFOIgnoreFileDoesNotHang(t *testing.T) {
	for _, name := range []string{".gitignore", "sub/.ignore"} {
		for _, be := range backends(t) {
			for _, stream := range []bool{be == "ugrep"} {
				root := t.TempDir()
				write(t, root, "a.txt", "needle\n")
				write(t, root, "sub/b.txt", "needle\n")
				if err := syscall.Mkfifo(filepath.Join(root, name), 0o644); err != nil {
					t.Fatal(err)
				}
				req, _ := DecodeRequest([]byte(`{"pattern":"needle","timeout_ms":300}`))
				opts := DefaultOptions(root)
				opts.Backend = be
				var emit func(Batch)
				if stream {
					emit = func(Batch) {}
				}
				done := make(chan string, 1)
				go func() {
					r, err := Run(context.Background(), req, opts, emit)
					done <- fmt.Sprintf("err=%v timed_out=%v count=%d", err, r.TimedOut, r.Count)
				}()
				select {
				case s := <-done:
					t.Logf("%s %s stream=%v: %s", name, be, stream, s)
				case <-time.After(3 * time.Second):
					t.Errorf("%s %s stream=%v: Run still running 3 s after timeout_ms=300", name, be, stream)
					// unblock the walker so the test can end
					if f, err := os.OpenFile(filepath.Join(root, name), os.O_WRONLY, 0); err == nil {
						f.Close()
					}
					<-done
				}
			}
		}
	}
}

func TestStreamingBatchesMatchTheResponse(t *testing.T) {
	root := filepath.Join(goSrcDir(t), "net")
	for _, be := range backends(t) {
		for _, reqJSON := range []string{`{"pattern":"func","max_results":3000}`, `{"pattern":"err","max_results":100000,"context":1}`, `{"pattern":"zzqqxx"}`, `{"pattern":"Dial","max_matches_per_file":2,"max_results":50}`} {
			req, _ := DecodeRequest([]byte(reqJSON))
			opts := DefaultOptions(root)
			opts.Backend = be
			var evs []Event
			errs := []FileError{}
			var lastFS int64
			r, err := Run(context.Background(), req, opts, func(b Batch) {
				if b.Offset != len(evs) {
					t.Errorf("%s %s: offset %d after %d events", be, reqJSON, b.Offset, len(evs))
				}
				if b.FilesScanned < lastFS {
					t.Errorf("%s %s: files_scanned went back %d -> %d", be, reqJSON, lastFS, b.FilesScanned)
				}
				lastFS = b.FilesScanned
				evs = append(evs, b.Events...)
				errs = append(errs, b.Errors...)
			})
			if err != nil {
				t.Fatal(err)
			}
			got := eventsJSON(Response{Matches: evs})
			if got != eventsJSON(r) || mustJSON(errs) != mustJSON(r.Errors) {
				t.Errorf("%s %s: streamed %d events, response %d", be, reqJSON, len(evs), len(r.Matches))
			}
			r2, _ := Run(context.Background(), req, opts, nil)
			if responseSummary(r2) != responseSummary(r) {
				t.Errorf("%s %s: streaming and non-streaming responses differ:\n%s", be, reqJSON, lineDiff(responseSummary(r2), responseSummary(r)))
			}
		}
	}
}

func TestOddOverrideGlobsNeverSelectFewerFiles(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"!foo", "foo", "#x", "x", "a,b", "d/!foo", "d/foo", " sp", "sp", "-g", "e/-g", "é", "a b"} {
		write(t, root, f, "x\n")
	}
	for _, g := range []string{"!foo", "#x", "a,b", "/!foo", " sp", "-g", "**", "**/", "/", "*/", "d/**/foo", "**/d", "a b", ".", "./foo", "foo/.", "d/../foo", "//foo", "d//foo"} {
		for _, deny := range [][]string{{g}, nil} {
			req := `{"pattern":"x","exclude_glob":[` + mustJSON(g) + `]}`
			if deny != nil {
				req = `{"pattern":"x"}`
			}
			r, err := DecodeRequest([]byte(req))
			if err != nil {
				t.Fatal(err)
			}
			o := DefaultOptions(root)
			if deny != nil {
				o.Deny = deny
			}
			if _, err := prepareUnchecked(r, o); err != nil {
				t.Logf("rejected %q deny=%v: %v", g, deny != nil, err)
				continue
			}
			onlyRG, onlyW := walkFileSets(t, root, req, deny)
			if len(onlyRG)+len(onlyW) > 0 {
				// rg selecting extra files is caught by the cross-check
				// (fallback); only fewer files would be a wrong answer.
				t.Logf("glob %q deny=%v: only rg %q, only walker %q", g, deny != nil, onlyRG, onlyW)
				if len(onlyW) > 0 {
					t.Errorf("glob %q: rg selects fewer files than the walker: %q", g, onlyW)
				}
				if deny == nil {
					expectAgree(t, root, req)
				}
			}
		}
	}
}

// follow:true follows symlinks out of the sandbox (NFR-LS-SEC-01) and
// into FIFOs (which plain entries never reach the backend as).
func TestFollowStaysInsideSandbox(t *testing.T) {
	outside := t.TempDir()
	write(t, outside, "secret.txt", "needle outside\n")
	write(t, outside, "dir/s.txt", "needle outside dir\n")
	root := t.TempDir()
	write(t, root, "a.txt", "needle inside\n")
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "lf.txt"))
	os.Symlink(filepath.Join(outside, "dir"), filepath.Join(root, "ld"))
	for _, be := range backends(t) {
		r := search(t, be, root, `{"pattern":"needle","follow":true}`)
		for _, m := range r.Matches {
			if strings.Contains(m.Line, "outside") {
				t.Errorf("%s: follow read outside the sandbox: %s %q", be, m.Path, m.Line)
			}
		}
	}
}

func TestFollowSkipsLinksToFIFOs(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "needle\n")
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink("fifo", filepath.Join(root, "zlink"))
	for _, be := range backends(t) {
		r := search(t, be, root, `{"pattern":"needle","follow":true,"timeout_ms":1500}`)
		if r.TimedOut || r.Count != 1 {
			t.Errorf("%s: timed_out=%v count=%d errors=%s", be, r.TimedOut, r.Count, mustJSON(r.Errors))
		}
	}
}

// follow:true reaches a denied file through a symlink with another name.
func TestFollowHonoursDeny(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".env", "needle=token\n")
	write(t, root, "keys/id_rsa", "needle key\n")
	os.Symlink(".env", filepath.Join(root, "config.txt"))
	os.Symlink("keys", filepath.Join(root, "k"))
	for _, be := range backends(t) {
		r := search(t, be, root, `{"pattern":"needle","follow":true,"hidden":true}`)
		if r.Count != 0 {
			t.Errorf("%s: denied content reached through symlinks: %s", be, eventsJSON(r))
		}
	}
}

func TestUTF16WithoutNULAgrees(t *testing.T) {
	root := t.TempDir()
	// UTF-16LE BOM + "日本\n" (U+65E5 U+672C U+000A would have a NUL; use U+2028-free CJK and no newline)
	write(t, root, "u16.txt", "\xff\xfe\xe5\x65\x2c\x67")
	write(t, root, "plain.txt", "日本\n")
	expectAgree(t, root, `{"pattern":"日本"}`)
	expectAgree(t, root, `{"pattern":"e."}`)
}

// expectWalkAgrees fails when the rg walk answers differently from the
// ordered path with rg (ugrep may differ on the points docs/search.md lists).
func expectWalkAgrees(t *testing.T, root, reqJSON string) {
	t.Helper()
	walk, answered, ordered := agreeCompare(t, root, reqJSON)
	if answered && walk != ordered["rg"] {
		t.Errorf("%s: rg walk (-) and ordered rg (+) differ:\n%s", reqJSON, lineDiff(walk, ordered["rg"]))
	}
}
