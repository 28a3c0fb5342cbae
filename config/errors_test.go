package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestErrorsNameTOMLKeysAndLines: every config error names the key as it is
// written in TOML (with the index of its array table) and the line a person
// must fix; none names a Go type.
func TestErrorsNameTOMLKeysAndLines(t *testing.T) {
	const threeDevices = "[[devices]]\nid = \"a\"\ndriver = \"sim\"\n\n" +
		"[[devices]]\nid = \"b\"\ndriver = \"sim\"\n\n" +
		"[[devices]]\nid = \"c\"\ndriver = \"vlc\"\n"
	cases := []struct {
		name, body string
		line       int
		key, rule  string
	}{
		{"plain table for a list of tables", "theme = \"dark\"\n[devices]\nid = \"x\"\ndriver = \"sim\"\n",
			2, "devices", "is a list of tables: write [[devices]], not [devices]"},
		{"plain table for nested list of tables", "[leases]\nissuer = \"i\"\n[leases.keys]\nkid = \"k\"\n",
			3, "leases.keys", "write [[leases.keys]], not [leases.keys]"},
		{"third device's driver", threeDevices, 11, "devices[2].driver", `must be sim, mpv or hass, got "vlc"`},
		{"second device's missing id points at its table", "[[devices]]\nid = \"a\"\ndriver = \"sim\"\n[[devices]]\ndriver = \"sim\"\n",
			4, "devices[1].id", "is required"},
		{"unknown key in the second device", "[[devices]]\nid = \"a\"\ndriver = \"sim\"\n[[devices]]\nid = \"b\"\nvolume = 3\n",
			6, "devices[1].volume", "unknown key"},
		{"wrong type in a device", "[[devices]]\nid = 5\n", 2, "devices[0].id", "must be a string, got an integer"},
		{"wrong type in the second lease key", "[[leases.keys]]\nkid = \"a\"\nalg = \"EdDSA\"\npublic_key = \"a.pem\"\n[[leases.keys]]\nkid = [1]\n",
			6, "leases.keys[1].kid", "must be a string, got an array"},
		{"bad alg in the second lease key", "[[leases.keys]]\nkid = \"a\"\nalg = \"EdDSA\"\npublic_key = \"a.pem\"\n[[leases.keys]]\nkid = \"b\"\nalg = \"HS256\"\n",
			7, "leases.keys[1].alg", "must be RS256 or EdDSA"},
		{"list of tables given a value", "devices = 3\n", 1, "devices", "must be a list of tables ([[devices]]), got an integer"},
		{"table given a value", "[tools]\nsearch = 5\n", 2, "tools.search", "must be a table ([tools.search]), got an integer"},
		{"string given a list of tables", "[[theme]]\nx = 1\n", 1, "theme", "must be a string, got a list of tables"},
		{"boolean given a string", "[approvals]\nbell = \"yes\"\n", 2, "approvals.bell", "must be true or false, got a string"},
		{"integer given a float", "[tools.search]\nmax_files = 1.5\n", 2, "tools.search.max_files", "must be an integer, got a float"},
		{"second duration bad", "[leases]\nleeway = \"10s\"\n[approvals]\ntimeout = \"soon\"\n", 4, "approvals.timeout", `invalid duration "soon"`},
		{"duration as integer", "[media]\naction_timeout = 10\n", 2, "media.action_timeout", "must be a duration string such as \"30s\" or \"10m\", got an integer"},
		{"duplicate scope name", "[[scopes]]\nname = \"a\"\nkind = \"files\"\npath = \"x\"\n[[scopes]]\nname = \"a\"\nkind = \"files\"\npath = \"y\"\n",
			6, "scopes[1].name", `duplicate scope name "a"`},
		{"dotted key inside a device", "[[devices]]\nid = \"a\"\ndriver = \"sim\"\n[[devices]]\nid = \"b\"\nsocket.path = \"x\"\n",
			6, "devices[1].socket", "must be a string, got a table"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := write(t, c.body)
			_, err := Load(p, "/")
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("want *config.Error, got %v", err)
			}
			if ce.Key != c.key || ce.Line != c.line || !strings.Contains(ce.Rule, c.rule) {
				t.Fatalf("got line %d key %q rule %q; want line %d key %q rule ~%q", ce.Line, ce.Key, ce.Rule, c.line, c.key, c.rule)
			}
			msg := strings.TrimPrefix(err.Error(), p)
			for _, goWord := range []string{"config.", "Config", "struct field", "of type", "[]"} {
				if strings.Contains(msg, goWord) {
					t.Fatalf("message speaks Go (%q): %s", goWord, msg)
				}
			}
		})
	}
}

// TestSyntaxErrorsKeepTheirWords: a TOML syntax error is not a type error;
// its own message and line stay.
func TestSyntaxErrorsKeepTheirWords(t *testing.T) {
	p := write(t, "theme = \"dark\"\n[tools.search\nbinary = \"rg\"\n")
	_, err := Load(p, "/")
	var ce *Error
	if !errors.As(err, &ce) || ce.Line != 2 || ce.Rule == "" {
		t.Fatalf("got %v, want a located syntax error on line 2", err)
	}
}

// TestTypeAtFollowsOptionalSections: a section that is a pointer (absent
// unless written, as [memory.embedder]) is walked like any table, so its
// keys get the same TOML-worded errors.
func TestTypeAtFollowsOptionalSections(t *testing.T) {
	type inner struct {
		Timeout Duration `toml:"timeout"`
		Model   string   `toml:"model"`
	}
	type outer struct {
		Section *inner   `toml:"section"`
		List    []*inner `toml:"list"`
	}
	root := reflect.TypeFor[outer]()
	if got := typeAt(root, "section.timeout"); got != durationType {
		t.Fatalf("section.timeout: %v", got)
	}
	if got := typeAt(root, "list[3].model"); got == nil || got.Kind() != reflect.String {
		t.Fatalf("list[3].model: %v", got)
	}
	if got := typeAt(root, "list"); got == nil || !isTableList(got) {
		t.Fatalf("list of pointers is not a list of tables: %v", got)
	}
	if got := describeGoType(typeAt(root, "section"), "section"); got != "a table ([section])" {
		t.Fatalf("section described as %q", got)
	}
}
