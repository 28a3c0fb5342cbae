package search

import (
	"errors"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// glob is one gitignore-style pattern. Vigil applies include/exclude, deny
// and .gitignore rules itself (the backends only see explicit file lists),
// so both backends select exactly the same files.
type glob struct {
	re       *regexp.Regexp
	dirOnly  bool // written with a trailing slash: matches directories only
	basename bool // no slash inside: matches the last component at any depth
	negate   bool // .gitignore "!" rule
	fold     bool // matches case-insensitively (deny globs: see compileDeny)
	// Common shapes ("name", "*.ext", "prefix*") skip the regexp: the walk
	// matches every path against the deny list.
	kind globKind
	lit  string
}

type globKind uint8

const (
	globRegexp globKind = iota
	globExact
	globSuffix // basename "*" + lit
	globPrefix // basename lit + "*"
)

// compileGlob turns a glob into an anchored regexp. Supported: *, ?, **,
// [...] (with ! or ^ negation), {a,b}, and backslash escapes.
func compileGlob(g string) (*glob, error) { return compileGlobFold(g, false) }

// compileGlobFold is compileGlob; with fold, the glob matches names
// case-insensitively, by Unicode simple case folding (Go's (?i), the
// folding of case-insensitive file systems: ".ENV" is ".env" there).
func compileGlobFold(g string, fold bool) (*glob, error) {
	out := &glob{fold: fold}
	g, anyDepth, err := out.anchor(g)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	if fold {
		b.WriteString(`(?i)`)
	}
	b.WriteString(`^`)
	if anyDepth {
		b.WriteString(`(?:.*/)?`)
	}
	if err := globBody(&b, g); err != nil {
		return nil, err
	}
	b.WriteString(`$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, err
	}
	out.re = re
	out.shortcut(g, anyDepth)
	return out, nil
}

// anchor strips the glob's trailing slash (dirOnly), leading slash
// (anchored at the base) or leading "**/", and says whether it matches a
// basename. It returns the rest of the glob and whether that rest may
// start at any depth.
func (out *glob) anchor(g string) (rest string, anyDepth bool, err error) {
	if strings.HasSuffix(g, "/") {
		out.dirOnly = true
		g = strings.TrimRight(g, "/")
		if g == "" {
			return "", false, errors.New("pattern is only slashes")
		}
	}
	if strings.HasPrefix(g, "/") {
		return strings.TrimLeft(g, "/"), false, nil
	}
	// A leading "**/" means "at any depth", which is what a pattern
	// without a slash already means; one with a slash (say
	// "**/config/secrets.yml") keeps its "any depth".
	for strings.HasPrefix(g, "**/") {
		g = g[3:]
		anyDepth = true
	}
	if !strings.Contains(g, "/") {
		out.basename = true
		anyDepth = false
	}
	return g, anyDepth, nil
}

// globBody writes the regexp for the glob g (its anchoring already
// stripped) to b.
func globBody(b *strings.Builder, g string) error {
	depth := 0 // inside {...}
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch c {
		case '*':
			i = globStar(b, g, i)
		case '?':
			b.WriteString(`[^/]`)
		case '\\':
			if i+1 >= len(g) {
				return errors.New("trailing backslash")
			}
			i++
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
		case '[':
			j, err := globClass(b, g, i)
			if err != nil {
				return err
			}
			i = j
		case '{':
			depth++
			b.WriteString(`(?:`)
		case '}':
			if depth == 0 {
				return errors.New("unmatched '}'")
			}
			depth--
			b.WriteString(`)`)
		case ',':
			if depth > 0 {
				b.WriteString(`|`)
			} else {
				b.WriteString(`,`)
			}
		default:
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
		}
	}
	if depth != 0 {
		return errors.New("unclosed alternation '{'")
	}
	return nil
}

// globStar writes the regexp for the "*" or "**" at g[i] and returns the
// index of its last byte consumed.
func globStar(b *strings.Builder, g string, i int) int {
	if i+1 >= len(g) || g[i+1] != '*' {
		b.WriteString(`[^/]*`)
		return i
	}
	// "**": any number of components when it stands alone.
	atStart := i == 0 || g[i-1] == '/'
	j := i + 2
	if atStart && j < len(g) && g[j] == '/' {
		b.WriteString(`(?:.*/)?`)
		return j
	}
	if atStart && j == len(g) {
		b.WriteString(`.*`)
		return j
	}
	b.WriteString(`[^/]*`)
	return i + 1
}

// globClass writes the regexp for the character class opening at g[i]
// ("[...]", negated by a leading ! or ^) and returns the index of its "]".
func globClass(b *strings.Builder, g string, i int) (int, error) {
	j := i + 1
	if j < len(g) && (g[j] == '!' || g[j] == '^') {
		j++
	}
	if j < len(g) && g[j] == ']' {
		j++
	}
	for j < len(g) && g[j] != ']' {
		j++
	}
	if j >= len(g) {
		return 0, errors.New("unclosed character class '['")
	}
	body := g[i+1 : j]
	neg := false
	if body != "" && (body[0] == '!' || body[0] == '^') {
		neg, body = true, body[1:]
	}
	b.WriteString("[")
	if neg {
		b.WriteString("^/")
	}
	for k := 0; k < len(body); k++ {
		ch := body[k]
		if ch == '\\' || ch == '[' || ch == ']' || ch == '^' {
			b.WriteByte('\\')
		}
		b.WriteByte(ch)
	}
	b.WriteString("]")
	return j, nil
}

// shortcut picks a match that skips the regexp for the common shapes
// ("name", "*.ext", "prefix*"), when one is exact.
func (out *glob) shortcut(g string, anyDepth bool) {
	const meta = `*?[\{}`
	switch {
	case anyDepth: // the regexp only
	case out.fold && !isASCII(g): // the regexp only (folding may change a name's length)
	case !strings.ContainsAny(g, meta):
		out.kind, out.lit = globExact, g
	case out.basename && len(g) > 1 && g[0] == '*' && !strings.ContainsAny(g[1:], meta):
		out.kind, out.lit = globSuffix, g[1:]
	case out.basename && len(g) > 1 && g[len(g)-1] == '*' && !strings.ContainsAny(g[:len(g)-1], meta):
		out.kind, out.lit = globPrefix, g[:len(g)-1]
	}
}

// match reports whether rel (slash-separated, relative to the glob's base)
// matches. isDir says whether rel names a directory.
func (g *glob) match(rel string, isDir bool) bool {
	if g.dirOnly && !isDir {
		return false
	}
	if g.basename {
		if i := strings.LastIndexByte(rel, '/'); i >= 0 {
			rel = rel[i+1:]
		}
	}
	if g.fold && g.kind != globRegexp {
		// An ASCII name folds as ASCII (no ASCII letter folds to another
		// ASCII byte but its other case); any other goes to the regexp.
		if !isASCII(rel) {
			return g.re.MatchString(rel)
		}
		switch g.kind {
		case globExact:
			return strings.EqualFold(rel, g.lit)
		case globSuffix:
			return len(rel) >= len(g.lit) && strings.EqualFold(rel[len(rel)-len(g.lit):], g.lit)
		case globPrefix:
			return len(rel) >= len(g.lit) && strings.EqualFold(rel[:len(g.lit)], g.lit)
		}
	}
	switch g.kind {
	case globExact:
		return rel == g.lit
	case globSuffix:
		return strings.HasSuffix(rel, g.lit)
	case globPrefix:
		return strings.HasPrefix(rel, g.lit)
	}
	return g.re.MatchString(rel)
}

// globSet is an ordered list of globs; any match wins.
type globSet []*glob

func compileSet(gs []string) (globSet, error) { return compileSetFold(gs, false) }

// compileDeny compiles [sandbox] deny globs, which match names
// case-insensitively: on a case-insensitive file system ".ENV",
// "KEY.PEM" and "Id_rsa" are the very files ".env", "*.pem" and "id_*"
// deny, and a request for ".ENV" opens the real ".env".
func compileDeny(gs []string) (globSet, error) { return compileSetFold(gs, true) }

func compileSetFold(gs []string, fold bool) (globSet, error) {
	var s globSet
	for _, g := range gs {
		c, err := compileGlobFold(g, fold)
		if err != nil {
			return nil, err
		}
		s = append(s, c)
	}
	return s, nil
}

// foldGlob rewrites a glob of rgSafeGlob's shape (no classes, braces or
// escapes) so that a backend matching case-sensitively matches it as
// compileDeny does: every letter becomes the set of its simple case
// folds (unicode.SimpleFold's orbit, which for "k" and "s" holds U+212A
// KELVIN SIGN and U+017F LONG S), written by set: "[eE]" (ugrep's
// classes read UTF-8) or "{e,E}" (rg's globset reads classes as bytes,
// and braces as whole alternatives).
func foldGlob(g string, braces bool) string {
	var b strings.Builder
	for _, r := range g {
		orbit := []rune{r}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			orbit = append(orbit, f)
		}
		if len(orbit) == 1 {
			b.WriteRune(r)
			continue
		}
		if braces {
			b.WriteByte('{')
		} else {
			b.WriteByte('[')
		}
		for i, f := range orbit {
			if i > 0 && braces {
				b.WriteByte(',')
			}
			b.WriteRune(f)
		}
		if braces {
			b.WriteByte('}')
		} else {
			b.WriteByte(']')
		}
	}
	return b.String()
}

func (s globSet) match(rel string, isDir bool) bool {
	for _, g := range s {
		if g.match(rel, isDir) {
			return true
		}
	}
	return false
}

// matchAncestors reports whether rel or any of its parent directories
// matches; deny rules such as ".git/" must hide everything below.
func (s globSet) matchAncestors(rel string, isDir bool) bool {
	if len(s) == 0 || rel == "" {
		return false
	}
	if s.match(rel, isDir) {
		return true
	}
	for i := len(rel) - 1; i > 0; i-- {
		if rel[i] == '/' && s.match(rel[:i], true) {
			return true
		}
	}
	return false
}

// ignoreKind is which kind of ignore file a rule came from. Like rg's
// ignore crate, a match in a higher-precedence kind wins regardless of
// depth: .rgignore over .ignore over .gitignore.
type ignoreKind uint8

const (
	kindGitignore ignoreKind = iota
	kindIgnore
	kindRgignore
)

// ignoreNames are the ignore files read in each directory, by kind.
var ignoreNames = [...]string{kindGitignore: ".gitignore", kindIgnore: ".ignore", kindRgignore: ".rgignore"}

// ignoreFile is one ignore file's rules; base is the directory holding it,
// relative to the sandbox root ("" for the root).
type ignoreFile struct {
	base   string
	kind   ignoreKind
	rules  []*glob
	rgSafe bool // every line is in rgSafeGlob's syntax
}

// rgSafeGlob reports whether rg's globset is known to read g exactly as
// compileGlob does: printable ASCII with only "*", "**" and "/" special.
// Elsewhere the two differ in ways that matter (rg's "?" is one byte, its
// negated classes match "/", it reads a stray "}" as an empty group, ...),
// so the rg walk is not used where such a glob applies.
func rgSafeGlob(g string) bool {
	if g == "" || g != strings.TrimSpace(g) {
		return false
	}
	for i := 0; i < len(g); i++ {
		c := g[i]
		if c < 0x20 || c > 0x7e || strings.IndexByte(`?[]{}\`, c) >= 0 {
			return false
		}
	}
	// Empty, "." and ".." components ("//foo", "./foo", "a/../b"): path
	// spellings the two may normalise differently (the walker reads
	// "//secret" as "/secret", rg's -g as nothing).
	if strings.Contains(g, "//") {
		return false
	}
	for _, part := range strings.Split(strings.Trim(g, "/"), "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	return true
}

func parseIgnore(base string, data []byte) ignoreFile {
	f := ignoreFile{base: base}
	f.rgSafe = true
	for _, line := range strings.Split(string(data), "\n") {
		// Trailing white space is ignored unless the line ends with an
		// escaped space (gitignore(5)); like rg, all of it, tabs too.
		if !strings.HasSuffix(line, `\ `) {
			line = strings.TrimRightFunc(line, unicode.IsSpace)
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f.rgSafe = f.rgSafe && rgSafeGlob(strings.TrimPrefix(line, "!"))
		neg := false
		if strings.HasPrefix(line, "!") {
			neg, line = true, line[1:]
		}
		g, err := compileGlob(line)
		if err != nil {
			continue // git and rg skip broken lines too
		}
		g.negate = neg
		f.rules = append(f.rules, g)
	}
	return f
}

// ignoreMatch applies a stack of ignore files (outermost first) the way rg
// 13 does, so that rg may walk the tree itself and still select the same
// files: for each kind, highest first, the deepest file with a matching
// rule decides by its last matching rule. A whitelisted path ("!rule") is
// not ignored and, as in rg, not hidden either.
func ignoreMatch(stack []ignoreFile, rel string, isDir bool) (ignore, whitelist bool) {
	for kind := kindRgignore; ; kind-- {
		for i := len(stack) - 1; i >= 0; i-- {
			f := stack[i]
			if f.kind != kind {
				continue
			}
			sub := rel
			if f.base != "" {
				if !strings.HasPrefix(rel, f.base+"/") {
					continue
				}
				sub = rel[len(f.base)+1:]
			}
			for j := len(f.rules) - 1; j >= 0; j-- {
				if f.rules[j].match(sub, isDir) {
					return !f.rules[j].negate, f.rules[j].negate
				}
			}
		}
		if kind == kindGitignore {
			return false, false
		}
	}
}

// dropGitignores removes .gitignore files from the stack: a directory with
// its own .git is a repository boundary, above which (as in git and rg)
// .gitignore files no longer apply.
func dropGitignores(stack []ignoreFile) []ignoreFile {
	var out []ignoreFile
	for _, f := range stack {
		if f.kind != kindGitignore {
			out = append(out, f)
		}
	}
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
