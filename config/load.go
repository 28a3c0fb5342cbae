package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Error is a configuration problem, located so a person can fix it:
// "config.toml:12: tools.search.max_files: must be a positive integer, got 0".
type Error struct {
	File string
	Line int // 0 when the problem has no single line
	Key  string
	Rule string
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Key == "" {
		return loc + ": " + e.Rule
	}
	return fmt.Sprintf("%s: %s: %s", loc, e.Key, e.Rule)
}

// Load reads the config file at path over the defaults. A missing file is
// not an error (the defaults apply); a file that exists must be valid.
// cwd is the directory Vigil runs in: the sandbox root's default.
func Load(path, cwd string) (Config, error) {
	cfg := Default()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		// defaults still resolve against the config's folder (revoked.txt lives in the home)
		resolvePaths(&cfg, filepath.Dir(path), cwd)
		return cfg, nil
	}
	if err != nil {
		return cfg, &Error{File: path, Rule: "cannot read: " + err.Error()}
	}
	if err := Parse(data, path, &cfg); err != nil {
		return cfg, err
	}
	resolvePaths(&cfg, filepath.Dir(path), cwd)
	return cfg, nil
}

// Parse decodes TOML strictly into cfg (which holds the defaults) and validates it.
// Every error names the key as written in the file, with the index of its
// array table (devices[2].driver), and the line it is on; none names a Go type.
func Parse(data []byte, file string, cfg *Config) error {
	sites := mapKeys(data)
	if e := misplacedTable(sites, cfg); e != nil {
		e.File = file
		return e
	}
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields().EnableUnmarshalerInterface()
	if err := dec.Decode(cfg); err != nil {
		return decodeError(err, file, sites, cfg)
	}
	if err := cfg.Validate(); err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			ce.File = file
			ce.Line = sites.lineOf(ce.Key)
		}
		return err
	}
	return nil
}

// decodeError turns the TOML decoder's error into an *Error that names the
// key as written and says what the setting takes in TOML words.
func decodeError(err error, file string, sites keySites, cfg *Config) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		first := strict.Errors[0]
		row, _ := first.Position()
		return &Error{File: file, Line: row, Key: sites.keyAt(row, first.Key()), Rule: "unknown key"}
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, _ := de.Position()
		s, ok := sites.at(row)
		if !ok {
			return &Error{File: file, Line: row, Key: strings.Join(de.Key(), "."), Rule: de.Error()}
		}
		if s.kind == unstable.ArrayTable {
			s.path = s.path[:strings.LastIndex(s.path, "[")] // the setting, not the element it would add
		}
		want := goTypeOf(cfg, s.path)
		switch {
		case want == durationType && s.kind != unstable.String:
			return &Error{File: file, Line: row, Key: s.path, Rule: fmt.Sprintf("must be %s, got %s", durationWords, describeKind(s.kind))}
		case want != nil && isTypeMismatch(de.Error()):
			return &Error{File: file, Line: row, Key: s.path, Rule: fmt.Sprintf("must be %s, got %s", describeGoType(want, s.path), describeKind(s.kind))}
		case want == nil && isTypeMismatch(de.Error()):
			// a dotted key (socket.path = …) made a table of a setting that is not one
			if key, t := settingAbove(cfg, s.path); t != nil {
				return &Error{File: file, Line: row, Key: key, Rule: fmt.Sprintf("must be %s, got a table", describeGoType(t, key))}
			}
		}
		return &Error{File: file, Line: row, Key: s.path, Rule: de.Error()}
	}
	if e := badDuration(sites, cfg); e != nil {
		e.File = file
		return e
	}
	return &Error{File: file, Rule: err.Error()}
}

// isTypeMismatch tells the decoder's type errors (whose messages name Go
// types) from its syntax errors (whose messages are about TOML and kept).
func isTypeMismatch(msg string) bool {
	return strings.Contains(msg, "cannot decode") || strings.Contains(msg, "cannot store") ||
		strings.Contains(msg, "cannot assign") || strings.Contains(msg, "cannot unmarshal")
}

// MaxResultsLimit bounds a search's max_results, requested or configured
// (so that the look-ahead max_results + 1 stays far from overflowing).
const MaxResultsLimit = 10_000_000

// MinMaxLineBytes is the smallest [tools.search] max_line_bytes. There is
// no "no cap" value: a line is never longer than its file, so a cap of
// max_file_size_bytes or more shows every line whole.
const MinMaxLineBytes = 64

// Validate checks the rules that TOML types cannot express (seed 001 CFG-LS-02..05 and friends).
// The sections are checked in file order, so the first error is always the same one.
func (c *Config) Validate() error {
	if err := c.Tools.Search.validate(); err != nil {
		return err
	}
	if err := c.Leases.validate(); err != nil {
		return err
	}
	if c.Approvals.Timeout.Duration <= 0 {
		return &Error{Key: "approvals.timeout", Rule: "must be positive"}
	}
	if c.Media.ActionTimeout.Duration <= 0 {
		return &Error{Key: "media.action_timeout", Rule: "must be positive"}
	}
	if err := validateDevices(c.Devices); err != nil {
		return err
	}
	if err := validateScopes(c.Scopes); err != nil {
		return err
	}
	switch c.Theme {
	case "", "auto", "dark", "light", "high-contrast":
	default:
		return &Error{Key: "theme", Rule: fmt.Sprintf("must be auto, dark, light or high-contrast, got %q", c.Theme)}
	}
	if c.UI.SearchDebounce.Duration < 0 {
		return &Error{Key: "ui.search_debounce", Rule: "must not be negative"}
	}
	if err := c.Notify.validate(); err != nil {
		return err
	}
	if err := c.Memory.validate(); err != nil {
		return err
	}
	if err := validateOperators(c.Operators); err != nil {
		return err
	}
	if err := validateAgents(c.Agents, c.Devices); err != nil {
		return err
	}
	if err := c.SSH.validate(); err != nil {
		return err
	}
	return validateRules(c.Rules)
}

// validate checks [tools.search]: positive limits, a usable line cap, and
// a backend to run.
func (s SearchConfig) validate() error {
	for _, f := range []struct {
		key string
		v   int64
	}{
		{"tools.search.default_timeout_ms", s.DefaultTimeoutMS},
		{"tools.search.default_max_results", s.DefaultMaxResults},
		{"tools.search.max_matches_per_file", s.MaxMatchesPerFile},
		{"tools.search.max_files", s.MaxFiles},
		{"tools.search.max_file_size_bytes", s.MaxFileSizeBytes},
	} {
		if f.v <= 0 {
			return &Error{Key: f.key, Rule: fmt.Sprintf("must be a positive integer, got %d", f.v)}
		}
	}
	if s.MaxLineBytes < MinMaxLineBytes {
		return &Error{Key: "tools.search.max_line_bytes", Rule: fmt.Sprintf("must be at least %d (a line's window must hold a match and the text around it), got %d", MinMaxLineBytes, s.MaxLineBytes)}
	}
	if s.DefaultMaxResults > MaxResultsLimit {
		return &Error{Key: "tools.search.default_max_results", Rule: fmt.Sprintf("must be <= %d (the bound on a request's max_results), got %d", MaxResultsLimit, s.DefaultMaxResults)}
	}
	if s.Binary == "" && s.FallbackBinary == "" {
		return &Error{Key: "tools.search.binary", Rule: "binary and fallback_binary cannot both be empty"}
	}
	return nil
}

// validate checks [leases]: the leeway and each verification key.
func (l LeasesConfig) validate() error {
	if l.Leeway.Duration < 0 {
		return &Error{Key: "leases.leeway", Rule: "must not be negative"}
	}
	for i, k := range l.Keys {
		if k.KID == "" {
			return &Error{Key: fmt.Sprintf("leases.keys[%d].kid", i), Rule: "is required"}
		}
		if k.Alg != "RS256" && k.Alg != "EdDSA" {
			return &Error{Key: fmt.Sprintf("leases.keys[%d].alg", i), Rule: fmt.Sprintf("must be RS256 or EdDSA, got %q", k.Alg)}
		}
		if k.PublicKey == "" {
			return &Error{Key: fmt.Sprintf("leases.keys[%d].public_key", i), Rule: "is required"}
		}
	}
	return nil
}

// validateDevices checks [[devices]]: unique ids and each driver's settings.
func validateDevices(devices []DeviceConfig) error {
	seen := map[string]bool{}
	for i, d := range devices {
		key := fmt.Sprintf("devices[%d]", i)
		switch {
		case d.ID == "":
			return &Error{Key: key + ".id", Rule: "is required"}
		case seen[d.ID]:
			return &Error{Key: key + ".id", Rule: fmt.Sprintf("duplicate device id %q", d.ID)}
		}
		seen[d.ID] = true
		switch d.Driver {
		case "sim":
		case "mpv":
			if d.Socket == "" {
				return &Error{Key: key + ".socket", Rule: "is required for the mpv driver"}
			}
		case "hass":
			if d.BaseURL == "" || d.EntityID == "" {
				return &Error{Key: key + ".base_url", Rule: "base_url and entity_id are required for the hass driver"}
			}
			if d.TokenEnv == "" && d.TokenFile == "" {
				return &Error{Key: key + ".token_env", Rule: "token_env or token_file is required for the hass driver"}
			}
		default:
			return &Error{Key: key + ".driver", Rule: fmt.Sprintf("must be sim, mpv or hass, got %q", d.Driver)}
		}
	}
	return nil
}

// validateScopes checks [[scopes]]: unique names, a known kind and a path.
func validateScopes(scopes []ScopeConfig) error {
	names := map[string]bool{}
	for i, sc := range scopes {
		key := fmt.Sprintf("scopes[%d]", i)
		switch {
		case sc.Name == "":
			return &Error{Key: key + ".name", Rule: "is required"}
		case names[sc.Name]:
			return &Error{Key: key + ".name", Rule: fmt.Sprintf("duplicate scope name %q", sc.Name)}
		case sc.Kind != "files" && sc.Kind != "emails" && sc.Kind != "dataset":
			return &Error{Key: key + ".kind", Rule: fmt.Sprintf("must be files, emails or dataset, got %q", sc.Kind)}
		case sc.Path == "":
			return &Error{Key: key + ".path", Rule: "is required"}
		case sc.Kind == "dataset" && sc.PrimaryKey == "":
			return &Error{Key: key + ".primary_key", Rule: "is required for a dataset scope"}
		}
		names[sc.Name] = true
	}
	return nil
}

// resolvePaths makes the config's relative paths absolute against the config's folder.
func resolvePaths(c *Config, dir, cwd string) {
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	if c.Sandbox.Root == "" {
		c.Sandbox.Root = cwd
	} else {
		c.Sandbox.Root = abs(c.Sandbox.Root)
	}
	c.Leases.Revoked = abs(c.Leases.Revoked)
	c.MCP.TokenFile = abs(c.MCP.TokenFile)
	for i := range c.Leases.Keys {
		c.Leases.Keys[i].PublicKey = abs(c.Leases.Keys[i].PublicKey)
	}
	for i := range c.Devices {
		c.Devices[i].Socket = abs(c.Devices[i].Socket)
		c.Devices[i].TokenFile = abs(c.Devices[i].TokenFile)
	}
	for i := range c.Scopes {
		c.Scopes[i].Path = abs(c.Scopes[i].Path)
	}
	c.SSH.HostKey = abs(c.SSH.HostKey)
	for i := range c.Operators {
		c.Operators[i].KeysFile = abs(c.Operators[i].KeysFile)
	}
	for i := range c.Agents {
		c.Agents[i].TokenFile = abs(c.Agents[i].TokenFile)
	}
}

// keySite is one table header or key-value of the file: its key as written,
// with array-table indices (devices[2].driver), its line, and the kind of its
// value (Table or ArrayTable for a header).
type keySite struct {
	path  string
	line  int
	kind  unstable.Kind
	value string // a string value's text
}

type keySites []keySite

// mapKeys lists every header and key-value of data in order. It uses
// go-toml's own parser, so keys are split exactly as the decoder splits them
// (quoted keys, dotted keys, whitespace); a document that does not parse is
// mapped up to the error, which the decoder then reports itself.
func mapKeys(data []byte) keySites {
	var p unstable.Parser
	p.Reset(data)
	var sites keySites
	count := map[string]int{} // array tables seen, by indexed path
	indexed := func(parts []string) string {
		cur := ""
		for _, part := range parts {
			cur = joinKey(cur, part)
			if n, ok := count[cur]; ok {
				cur += "[" + strconv.Itoa(n-1) + "]"
			}
		}
		return cur
	}
	table := ""
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			parts, line := keyParts(&p, e)
			var path string
			if e.Kind == unstable.ArrayTable {
				// a new element of the list: its parents' current elements, then the next index
				path = joinKey(indexed(parts[:len(parts)-1]), parts[len(parts)-1])
				count[path]++
				path += "[" + strconv.Itoa(count[path]-1) + "]"
			} else {
				path = indexed(parts)
			}
			table = path
			sites = append(sites, keySite{path: path, line: line, kind: e.Kind})
		case unstable.KeyValue:
			parts, line := keyParts(&p, e)
			v := e.Value()
			site := keySite{path: joinKey(table, strings.Join(parts, ".")), line: line, kind: v.Kind}
			if v.Kind == unstable.String {
				site.value = string(v.Data)
			}
			sites = append(sites, site)
		}
	}
	return sites
}

// keyParts returns the parts of a header's or key-value's key and its line.
func keyParts(p *unstable.Parser, e *unstable.Node) ([]string, int) {
	var parts []string
	line := 0
	for it := e.Key(); it.Next(); {
		k := it.Node()
		if line == 0 {
			line = p.Shape(k.Raw).Start.Line
		}
		parts = append(parts, string(k.Data))
	}
	return parts, line
}

func joinKey(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// at is the site on line row.
func (ss keySites) at(row int) (keySite, bool) {
	for _, s := range ss {
		if s.line == row {
			return s, true
		}
	}
	return keySite{}, false
}

// keyAt names the key on line row as written, with its array-table index;
// the decoder's own key (which has no index) when the line is not mapped.
func (ss keySites) keyAt(row int, decoderKey []string) string {
	if s, ok := ss.at(row); ok {
		return s.path
	}
	return strings.Join(decoderKey, ".")
}

// lineOf is the line where key is set; when the file does not set it (a
// rule about a default, or one element of an array), the line of the
// nearest enclosing key or table that it does set; 0 when none is.
func (ss keySites) lineOf(key string) int {
	for key != "" {
		for _, s := range ss {
			if s.path == key {
				return s.line
			}
		}
		if i := strings.LastIndexAny(key, ".["); i >= 0 {
			key = key[:i]
		} else {
			key = ""
		}
	}
	return 0
}

// misplacedTable finds a [name] header where the setting is a list of tables
// ([[name]]). go-toml would read it as a one-element list, so an entry meant
// to be one of several would silently be the only one.
func misplacedTable(sites keySites, cfg *Config) *Error {
	for _, s := range sites {
		if s.kind != unstable.Table {
			continue
		}
		if t := goTypeOf(cfg, s.path); t != nil && isTableList(t) {
			name := stripIndices(s.path)
			return &Error{Line: s.line, Key: s.path, Rule: fmt.Sprintf("is a list of tables: write [[%s]], not [%s]", name, name)}
		}
	}
	return nil
}

// badDuration finds the first duration setting that is not a duration string,
// so its error can name the line and key (the decoder reports neither for
// errors raised while converting a value).
func badDuration(sites keySites, cfg *Config) *Error {
	for _, s := range sites {
		if goTypeOf(cfg, s.path) == durationType {
			if e := durationRule(s); e != nil {
				return e
			}
		}
	}
	return nil
}

// settingAbove is the nearest setting Config has above path, and its type.
func settingAbove(cfg *Config, path string) (string, reflect.Type) {
	for {
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			return "", nil
		}
		path = path[:i]
		if t := goTypeOf(cfg, path); t != nil {
			return path, t
		}
	}
}

// durationRule checks one duration setting; nil when it is fine.
func durationRule(s keySite) *Error {
	if s.kind != unstable.String {
		return &Error{Line: s.line, Key: s.path, Rule: fmt.Sprintf("must be %s, got %s", durationWords, describeKind(s.kind))}
	}
	if _, err := time.ParseDuration(s.value); err != nil {
		return &Error{Line: s.line, Key: s.path, Rule: fmt.Sprintf("must be %s, got %q", durationWords, s.value)}
	}
	return nil
}

var durationType = reflect.TypeFor[Duration]()

const durationWords = `a duration string such as "30s" or "10m"`

// goTypeOf is the Go type the decoder fills for the TOML key path (indices
// allowed), found through the toml tags of Config; nil for a key Config lacks.
func goTypeOf(cfg *Config, path string) reflect.Type {
	return typeAt(reflect.TypeOf(cfg).Elem(), path)
}

// typeAt walks path through t's toml tags; an optional section (a pointer
// to a struct) is walked as the struct.
func typeAt(t reflect.Type, path string) reflect.Type {
	for _, seg := range strings.Split(path, ".") {
		name, indexed := strings.CutSuffix(seg, "]")
		if indexed {
			name = name[:strings.LastIndex(name, "[")]
		}
		t = derefType(t)
		if t.Kind() != reflect.Struct {
			return nil
		}
		f, ok := fieldByTOMLName(t, name)
		if !ok {
			return nil
		}
		t = f.Type
		if indexed {
			if t.Kind() != reflect.Slice {
				return nil
			}
			t = t.Elem()
		}
	}
	return derefType(t)
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func fieldByTOMLName(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func isTableList(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && derefType(t.Elem()).Kind() == reflect.Struct && derefType(t.Elem()) != durationType
}

func stripIndices(path string) string {
	var b strings.Builder
	skip := false
	for _, r := range path {
		switch {
		case r == '[':
			skip = true
		case r == ']':
			skip = false
		case !skip:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// describeGoType says in TOML words what a setting of Go type t takes.
func describeGoType(t reflect.Type, path string) string {
	switch {
	case t == durationType:
		return durationWords
	case isTableList(t):
		return fmt.Sprintf("a list of tables ([[%s]])", stripIndices(path))
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.String {
			return "an array of strings"
		}
		return "an array"
	case reflect.Struct, reflect.Map:
		return fmt.Sprintf("a table ([%s])", stripIndices(path))
	}
	return "a " + t.Kind().String()
}

// describeKind names a TOML value's kind as a person would.
func describeKind(k unstable.Kind) string {
	switch k {
	case unstable.String:
		return "a string"
	case unstable.Integer:
		return "an integer"
	case unstable.Float:
		return "a float"
	case unstable.Bool:
		return "a boolean"
	case unstable.Array:
		return "an array"
	case unstable.InlineTable:
		return "an inline table"
	case unstable.Table:
		return "a table"
	case unstable.ArrayTable:
		return "a list of tables"
	case unstable.LocalDate, unstable.LocalTime, unstable.LocalDateTime, unstable.DateTime:
		return "a date or time"
	}
	return "a " + strings.ToLower(k.String())
}
