package rules

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/config"
)

// TestDocsExamplesHold: every TOML block of docs/rules.md loads as a
// config, compiles without a warning, and its examples give what they want;
// every `when` variable is in the docs' table.
func TestDocsExamplesHold(t *testing.T) {
	raw, err := os.ReadFile("../../docs/rules.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	blocks := regexp.MustCompile("(?s)```toml\n(.*?)```").FindAllStringSubmatch(doc, -1)
	if len(blocks) < 5 {
		t.Fatalf("found %d TOML blocks", len(blocks))
	}
	examples := 0
	for i, b := range blocks {
		cfg := config.Default()
		if err := config.Parse([]byte(b[1]), "docs/rules.md block", &cfg); err != nil {
			t.Errorf("block %d: %v", i, err)
			continue
		}
		defs := make([]Def, len(cfg.Rules))
		for j, r := range cfg.Rules {
			defs[j] = Def{RuleConfig: r, Source: SourceConfig}
		}
		s, err := Compile(defs, utc, at(12, 0))
		if err != nil {
			t.Errorf("block %d: %v", i, err)
			continue
		}
		if len(s.Warnings) > 0 {
			t.Errorf("block %d warns:\n%s", i, strings.Join(s.Warnings, "\n"))
		}
		examples += len(s.CheckExamples(at(12, 0)))
	}
	if examples < 10 {
		t.Errorf("only %d examples checked", examples)
	}
	for _, v := range config.WhenVariables {
		if !strings.Contains(doc, "| `"+v.Name+"` |") {
			t.Errorf("docs/rules.md does not list the variable %s", v.Name)
		}
	}
}
