package search

import "testing"

// TestCompileGlobStages pins the regexp and shortcut each glob shape
// compiles to, so the stages of compileGlobFold (anchor, body, star,
// class, shortcut) keep their output when they are rearranged.
func TestCompileGlobStages(t *testing.T) {
	cases := []struct {
		glob     string
		fold     bool
		re       string
		kind     globKind
		lit      string
		dirOnly  bool
		basename bool
		err      string
	}{
		{glob: "name", re: `^name$`, kind: globExact, lit: "name", basename: true},
		{glob: "*.go", re: `^[^/]*\.go$`, kind: globSuffix, lit: ".go", basename: true},
		{glob: "pre*", re: `^pre[^/]*$`, kind: globPrefix, lit: "pre", basename: true},
		{glob: "build/", re: `^build$`, kind: globExact, lit: "build", dirOnly: true, basename: true},
		{glob: "/a/b", re: `^a/b$`, kind: globExact, lit: "a/b"},
		{glob: "**/config/secrets.yml", re: `^(?:.*/)?config/secrets\.yml$`},
		{glob: "**/x", re: `^x$`, kind: globExact, lit: "x", basename: true},
		{glob: "a/**/b", re: `^a/(?:.*/)?b$`},
		{glob: "a/**", re: `^a/.*$`},
		{glob: "a**b", re: `^a[^/]*b$`, basename: true},
		{glob: "a?c", re: `^a[^/]c$`, basename: true},
		{glob: `a\*`, re: `^a\*$`, basename: true},
		{glob: "[!a-c]x", re: `^[^/a-c]x$`, basename: true},
		{glob: "[]^]", re: `^[\]\^]$`, basename: true},
		{glob: "*.{js,ts}", re: `^[^/]*\.(?:js|ts)$`, basename: true},
		{glob: "a,b", re: `^a,b$`, kind: globExact, lit: "a,b", basename: true},
		{glob: ".ENV", fold: true, re: `(?i)^\.ENV$`, kind: globExact, lit: ".ENV", basename: true},
		{glob: "ÄB", fold: true, re: `(?i)^ÄB$`, basename: true},
		{glob: "///", err: "pattern is only slashes"},
		{glob: `a\`, err: "trailing backslash"},
		{glob: "[ab", err: "unclosed character class '['"},
		{glob: "a}", err: "unmatched '}'"},
		{glob: "{a,b", err: "unclosed alternation '{'"},
	}
	for _, c := range cases {
		g, err := compileGlobFold(c.glob, c.fold)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: err %v, want %q", c.glob, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.glob, err)
			continue
		}
		if g.re.String() != c.re || g.kind != c.kind || g.lit != c.lit || g.dirOnly != c.dirOnly || g.basename != c.basename {
			t.Errorf("%q: re %q kind %d lit %q dirOnly %v basename %v; want %q %d %q %v %v",
				c.glob, g.re, g.kind, g.lit, g.dirOnly, g.basename, c.re, c.kind, c.lit, c.dirOnly, c.basename)
		}
	}
}
