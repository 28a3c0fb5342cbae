package scope

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/task"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/golden")

// fixtures returns scopes over the files in testdata. The file tree and the
// Maildir are copied into a temp dir first: the tree gets symlinks (which a
// module zip cannot carry), and the Maildir's cur/ files get their ":2,S"
// info suffix (a colon is not allowed in module file names).
func fixtures(t testing.TB) []config.ScopeConfig {
	t.Helper()
	tmp := t.TempDir()
	tree := filepath.Join(tmp, "tree")
	if err := os.CopyFS(tree, os.DirFS("testdata/tree")); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"link-report.txt":      "report.txt",
		"notes/linked-reports": "../reports",
		"dangling-report":      "nowhere",
	} {
		if err := os.Symlink(target, filepath.Join(tree, link)); err != nil {
			t.Fatal(err)
		}
	}
	md := filepath.Join(tmp, "maildir")
	if err := os.CopyFS(md, os.DirFS("testdata/maildir")); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(filepath.Join(md, "cur"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		old := filepath.Join(md, "cur", e.Name())
		if err := os.Rename(old, old+":2,S"); err != nil {
			t.Fatal(err)
		}
	}
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	return []config.ScopeConfig{
		{Name: "tree", Kind: KindFiles, Path: tree},
		{Name: "maildir", Kind: KindEmails, Path: md},
		{Name: "mbox", Kind: KindEmails, Path: abs("testdata/mail.mbox")},
		{Name: "contacts", Kind: KindDataset, Path: abs("testdata/contacts.csv"), PrimaryKey: "id"},
		{Name: "contacts-rows", Kind: KindDataset, Path: abs("testdata/contacts.csv")},
		{Name: "records", Kind: KindDataset, Path: abs("testdata/records.jsonl"), PrimaryKey: "sku"},
	}
}

func inputs(query, scope string, max int) json.RawMessage {
	b, _ := json.Marshal(Inputs{Query: query, TargetScope: scope, MaxResults: max})
	return b
}

func scopeNamed(t testing.TB, scopes []config.ScopeConfig, name string) config.ScopeConfig {
	t.Helper()
	sc, terr := Allowed(scopes, name)
	if terr != nil {
		t.Fatal(terr)
	}
	return sc
}

type goldenCase struct {
	name, capability, query, scope string
	max                            int
}

var goldenCases = []goldenCase{
	{"files_report", SearchFiles, "report", "tree", 100},
	{"files_report_truncated", SearchFiles, "report", "tree", 3},
	{"files_unicode", SearchFiles, "sumé", "tree", 10},
	{"maildir_friday", SearchEmails, "Friday", "maildir", 10},
	{"maildir_bob", SearchEmails, "bob@example.org", "maildir", 10},
	{"mbox_bob_all", SearchEmails, "Bob", "mbox", 100},
	{"mbox_qp_utf8", SearchEmails, "crème brûlée", "mbox", 10},
	{"mbox_base64", SearchEmails, "pineapple-42", "mbox", 10},
	{"mbox_latin1_body", SearchEmails, "Grüße aus München", "mbox", 10},
	{"mbox_latin1_subject", SearchEmails, "Résumé", "mbox", 10},
	{"mbox_latin1_from", SearchEmails, "Davé Müller", "mbox", 10},
	{"mbox_multipart_plain", SearchEmails, "kiwi", "mbox", 10},
	{"mbox_multipart_second_part", SearchEmails, "guava=", "mbox", 10},
	{"mbox_html_only", SearchEmails, "mango", "mbox", 10},
	{"mbox_attachment_not_matched", SearchEmails, "papaya", "mbox", 10},
	{"mbox_unquoted_from", SearchEmails, "From the start", "mbox", 10},
	{"mbox_double_quote", SearchEmails, ">From two", "mbox", 10},
	{"mbox_no_split", SearchEmails, "not a separator", "mbox", 10},
	{"csv_cafe", SearchDatasets, "café", "contacts", 10},
	{"csv_cafe_rows", SearchDatasets, "café", "contacts-rows", 10},
	{"csv_london", SearchDatasets, "London", "contacts", 10},
	{"csv_quotes", SearchDatasets, `"the first program"`, "contacts", 10},
	{"csv_multiline", SearchDatasets, "pioneer\nand", "contacts", 10},
	{"csv_all_truncated", SearchDatasets, "@example.org", "contacts", 4},
	{"jsonl_cafe", SearchDatasets, "café", "records", 10},
}

func TestGolden(t *testing.T) {
	scopes := fixtures(t)
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			out, terr := Execute(context.Background(), scopes, "task-"+c.name, c.capability, inputs(c.query, c.scope, c.max), Limits{})
			if terr != nil {
				t.Fatal(terr)
			}
			got := encode(t, out)
			path := filepath.Join("testdata", "golden", c.name+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s:\ngot:\n%s\nwant:\n%s", path, got, want)
			}
			// The count and truncation rules of seed 000 §6 hold for every case.
			if out.Truncated != (out.Count > c.max) || len(out.Results) != min(out.Count, c.max) {
				t.Errorf("count %d, %d results, truncated %v, max %d: inconsistent", out.Count, len(out.Results), out.Truncated, c.max)
			}
			// A second run gives byte-identical output (seed 000 §9).
			again, _ := Execute(context.Background(), scopes, "task-"+c.name, c.capability, inputs(c.query, c.scope, c.max), Limits{})
			againJSON := encode(t, again)
			if !bytes.Equal(againJSON, got) {
				t.Errorf("second run differs:\n%s", againJSON)
			}
		})
	}
}

// encode writes goldens without HTML escaping so snippets of mail stay readable.
func encode(t *testing.T, out Output) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestHits checks that every hit's offsets cover the query in its snippet,
// so a pane can highlight it.
func TestHits(t *testing.T) {
	scopes := fixtures(t)
	for _, c := range goldenCases {
		hs, terr := Search(context.Background(), scopeNamed(t, scopes, c.scope), Query{Text: c.query, MaxResults: c.max}, Limits{})
		if terr != nil {
			t.Fatal(terr)
		}
		q := strings.Map(func(r rune) rune {
			if r < 0x20 {
				return ' '
			}
			return r
		}, c.query)
		for _, h := range hs.Hits {
			if h.Snippet[h.MatchStart:h.MatchEnd] != q {
				t.Errorf("%s: %s: snippet %q [%d:%d] is %q, want %q", c.name, h.ID, h.Snippet, h.MatchStart, h.MatchEnd, h.Snippet[h.MatchStart:h.MatchEnd], q)
			}
		}
	}
}

func hitsOf(t *testing.T, scopes []config.ScopeConfig, scope, query string) Hits {
	t.Helper()
	hs, terr := Search(context.Background(), scopeNamed(t, scopes, scope), Query{Text: query, MaxResults: 1000}, Limits{})
	if terr != nil {
		t.Fatal(terr)
	}
	return hs
}

func hitIDs(hs Hits) string {
	var s []string
	for _, h := range hs.Hits {
		s = append(s, h.ID)
	}
	return strings.Join(s, " | ")
}

func TestFilesRules(t *testing.T) {
	scopes := fixtures(t)
	hs := hitsOf(t, scopes, "tree", "report")
	got := hitIDs(hs)
	// Code-point order of the relative path: "." < "R" < "a" < "a+" < "a/" < "n" < "r" < "z" < "ü";
	// no symlinks, no directories (reports/), names only (other.txt's content says report).
	want := ".hidden-report | a+report.txt | a/report.txt | notes/deep/a/weekly report.txt | notes/report-2024.txt | notes/résumé-report.txt | report.txt | zeta/report | über-report.txt"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Case-sensitive: "Report" finds only Report.md, which "report" missed.
	if got := hitIDs(hitsOf(t, scopes, "tree", "Report")); got != "Report.md" {
		t.Errorf("case-sensitive: got %s", got)
	}
	// Directories and what lies behind a symlinked directory are never results.
	if got := hitIDs(hitsOf(t, scopes, "tree", "x.txt")); got != "reports/x.txt" {
		t.Errorf("x.txt: got %s", got)
	}
	if got := hitIDs(hitsOf(t, scopes, "tree", "link")); got != "" {
		t.Errorf("symlinks reported: %s", got)
	}
}

func TestEmailOrderAndTimestamps(t *testing.T) {
	scopes := fixtures(t)
	hs := hitsOf(t, scopes, "mbox", "Bob")
	var got []string
	for _, h := range hs.Hits {
		got = append(got, h.ID+"@"+h.Timestamp)
	}
	// 7 has only a From_ line date (the earliest); 1 and 9 tie on time and
	// keep file order; 8 has no usable date and sorts last.
	want := "7@2023-12-31T23:00:00Z 1@2024-01-01T10:00:00Z 9@2024-01-01T10:00:00Z 2@2024-01-02T10:00:00Z 3@2024-01-03T10:00:00Z 4@2024-01-04T10:00:00Z 5@2024-01-05T10:00:00Z 6@2024-01-06T10:00:00Z 8@"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
	md := hitsOf(t, scopes, "maildir", "Friday")
	got = nil
	for _, h := range md.Hits {
		got = append(got, h.ID+"@"+h.Timestamp+"@"+h.Field)
	}
	// The +0200 Date becomes UTC; the undated-name message has a bad Date and
	// sorts last; the dot file is not a message; the header-less one takes
	// its file name's delivery time.
	want = "1703980800.M3P1.host@2023-12-31T00:30:00Z@subject 1704067200.M1P1.host@2024-01-01T00:00:00Z@subject 1704153600.M2P1.host@2024-01-02T00:00:00Z@body undated-message@@subject"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}

// TestMaildirIDStable: a mail client reading a message moves it from new/ to
// cur/ and adds flags; its id must not change.
func TestMaildirIDStable(t *testing.T) {
	scopes := fixtures(t)
	md := scopeNamed(t, scopes, "maildir")
	before := hitIDs(hitsOf(t, scopes, "maildir", "Zone test"))
	if err := os.Rename(filepath.Join(md.Path, "new", "1703980800.M3P1.host"), filepath.Join(md.Path, "cur", "1703980800.M3P1.host:2,RS")); err != nil {
		t.Fatal(err)
	}
	after := hitIDs(hitsOf(t, scopes, "maildir", "Zone test"))
	if before != "1703980800.M3P1.host" || after != before {
		t.Errorf("before %q, after %q", before, after)
	}
	if doc, err := Open(md, after); err != nil || doc.Title != "Zone test Friday" {
		t.Errorf("open after move: %v %q", err, doc.Title)
	}
}

func TestDatasetOrder(t *testing.T) {
	scopes := fixtures(t)
	// Integer keys numerically first (-5, 1, 2, 007, 10), then others by code point (A7).
	if got := hitIDs(hitsOf(t, scopes, "contacts", "@")); got != "-5 | 1 | 2 | 007 | 10 | A7" {
		t.Errorf("csv: got %s", got)
	}
	if got := hitIDs(hitsOf(t, scopes, "contacts-rows", "@")); got != "1 | 2 | 3 | 4 | 5 | 6" {
		t.Errorf("csv rows: got %s", got)
	}
	// The BOM is not part of the first column's name.
	hs := hitsOf(t, scopes, "contacts", "A7")
	if len(hs.Hits) != 1 || hs.Hits[0].Field != "id" {
		t.Errorf("bom: %+v", hs.Hits)
	}
	// JSON Lines: number 42 first; nested and non-string values not matched;
	// key order decides match_field.
	hs = hitsOf(t, scopes, "records", "café")
	var got []string
	for _, h := range hs.Hits {
		got = append(got, h.ID+":"+h.Field)
	}
	if strings.Join(got, " ") != "42:title A-10:notes A-9:notes B-2:title" {
		t.Errorf("jsonl: got %s", strings.Join(got, " "))
	}
	if got := hitIDs(hitsOf(t, scopes, "records", "not matched")); got != "" {
		t.Errorf("nested value matched: %s", got)
	}
}

func code(terr *task.Error) task.Code {
	if terr == nil {
		return ""
	}
	return terr.Code
}

func TestValidation(t *testing.T) {
	scopes := fixtures(t)
	long := strings.Repeat("é", MaxQueryRunes)
	cases := []struct {
		name, capability, raw string
		want                  task.Code
		field                 string // the message must name it
	}{
		{"ok", SearchFiles, `{"query":"report","target_scope":"tree","max_results":1}`, "", ""},
		{"ok max 1000", SearchFiles, `{"query":"report","target_scope":"tree","max_results":1000}`, "", ""},
		{"ok 4096 runes padded", SearchFiles, `{"query":"  ` + long + ` \n","target_scope":"tree","max_results":5}`, "", ""},
		{"ok surrogate pair", SearchFiles, `{"query":"\ud83d\ude00","target_scope":"tree","max_results":5}`, "", ""},
		{"unsupported", "SEARCH_WEB", `{"query":"x","target_scope":"tree","max_results":5}`, task.UnsupportedCapability, "capability_id"},
		{"empty capability", "", `{"query":"x","target_scope":"tree","max_results":5}`, task.UnsupportedCapability, "capability_id"},
		{"blank query", SearchFiles, `{"query":" \t\n ","target_scope":"tree","max_results":5}`, task.InvalidQuery, "query"},
		{"empty query", SearchFiles, `{"query":"","target_scope":"tree","max_results":5}`, task.InvalidQuery, "query"},
		{"4097 runes", SearchFiles, `{"query":"` + long + `x","target_scope":"tree","max_results":5}`, task.InvalidQuery, "query"},
		{"max 0", SearchFiles, `{"query":"x","target_scope":"tree","max_results":0}`, task.InvalidQuery, "max_results"},
		{"max 1001", SearchFiles, `{"query":"x","target_scope":"tree","max_results":1001}`, task.InvalidQuery, "max_results"},
		{"max negative", SearchFiles, `{"query":"x","target_scope":"tree","max_results":-1}`, task.InvalidQuery, "max_results"},
		{"max string", SearchFiles, `{"query":"x","target_scope":"tree","max_results":"5"}`, task.InvalidQuery, "max_results"},
		{"max float", SearchFiles, `{"query":"x","target_scope":"tree","max_results":1.5}`, task.InvalidQuery, "max_results"},
		{"max missing", SearchFiles, `{"query":"x","target_scope":"tree"}`, task.InvalidQuery, "max_results"},
		{"query number", SearchFiles, `{"query":5,"target_scope":"tree","max_results":5}`, task.InvalidQuery, "query"},
		{"query missing", SearchFiles, `{"target_scope":"tree","max_results":5}`, task.InvalidQuery, "query"},
		{"unknown field", SearchFiles, `{"query":"x","target_scope":"tree","max_results":5,"regex":true}`, task.InvalidQuery, "regex"},
		{"trailing data", SearchFiles, `{"query":"x","target_scope":"tree","max_results":5} {}`, task.InvalidQuery, "after"},
		{"null", SearchFiles, `null`, task.InvalidQuery, "inputs"},
		{"array", SearchFiles, `[]`, task.InvalidQuery, "inputs"},
		{"invalid utf-8", SearchFiles, "{\"query\":\"a\xffb\",\"target_scope\":\"tree\",\"max_results\":5}", task.InvalidQuery, "UTF-8"},
		{"lone surrogate", SearchFiles, `{"query":"a\ud800b","target_scope":"tree","max_results":5}`, task.InvalidQuery, "surrogate"},
		{"lone low surrogate", SearchFiles, `{"query":"\udc00","target_scope":"tree","max_results":5}`, task.InvalidQuery, "surrogate"},
		{"escaped backslash is not an escape", SearchFiles, `{"query":"\\ud800","target_scope":"tree","max_results":5}`, "", ""},
		{"scope not allowed", SearchFiles, `{"query":"x","target_scope":"etc","max_results":5}`, task.ScopeNotAllowed, "target_scope"},
		{"scope empty", SearchFiles, `{"query":"x","target_scope":"","max_results":5}`, task.ScopeNotAllowed, "target_scope"},
		{"kind mismatch", SearchFiles, `{"query":"x","target_scope":"mbox","max_results":5}`, task.ScopeNotAllowed, "target_scope"},
		{"kind mismatch dataset", SearchEmails, `{"query":"x","target_scope":"contacts","max_results":5}`, task.ScopeNotAllowed, "target_scope"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, terr := Execute(context.Background(), scopes, "t1", c.capability, json.RawMessage(c.raw), Limits{})
			if code(terr) != c.want {
				t.Fatalf("got %v, want %s", terr, c.want)
			}
			if terr != nil && !strings.Contains(terr.Message, c.field) {
				t.Errorf("message %q does not name %q", terr.Message, c.field)
			}
		})
	}
}

func TestScopeUnavailable(t *testing.T) {
	tmp := t.TempDir()
	mustWrite(t, filepath.Join(tmp, "plain.txt"), "not an mbox\n")
	mustWrite(t, filepath.Join(tmp, "data.xml"), "<a/>")
	mustWrite(t, filepath.Join(tmp, "c.csv"), "a,b\n1,2\n")
	mustWrite(t, filepath.Join(tmp, "dup.csv"), "a,a\n1,2\n")
	if err := os.Mkdir(filepath.Join(tmp, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("dir", filepath.Join(tmp, "link")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		sc   config.ScopeConfig
	}{
		{"missing", config.ScopeConfig{Name: "s", Kind: KindFiles, Path: filepath.Join(tmp, "nope")}},
		{"empty path", config.ScopeConfig{Name: "s", Kind: KindFiles}},
		{"files on a file", config.ScopeConfig{Name: "s", Kind: KindFiles, Path: filepath.Join(tmp, "plain.txt")}},
		{"symlinked root", config.ScopeConfig{Name: "s", Kind: KindFiles, Path: filepath.Join(tmp, "link")}},
		{"not a maildir", config.ScopeConfig{Name: "s", Kind: KindEmails, Path: filepath.Join(tmp, "dir")}},
		{"not an mbox", config.ScopeConfig{Name: "s", Kind: KindEmails, Path: filepath.Join(tmp, "plain.txt")}},
		{"unknown dataset format", config.ScopeConfig{Name: "s", Kind: KindDataset, Path: filepath.Join(tmp, "data.xml")}},
		{"primary key not a column", config.ScopeConfig{Name: "s", Kind: KindDataset, Path: filepath.Join(tmp, "c.csv"), PrimaryKey: "id"}},
		{"duplicate column", config.ScopeConfig{Name: "s", Kind: KindDataset, Path: filepath.Join(tmp, "dup.csv")}},
		{"unknown kind", config.ScopeConfig{Name: "s", Kind: "web", Path: tmp}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, terr := Search(context.Background(), c.sc, Query{Text: "a", MaxResults: 5}, Limits{})
			if code(terr) != task.ScopeUnavailable {
				t.Fatalf("got %v, want SCOPE_UNAVAILABLE", terr)
			}
			if !strings.Contains(terr.Message, `scope "s"`) {
				t.Errorf("message %q does not name the scope", terr.Message)
			}
		})
	}
	// Permission bits do not stop root, so this case runs only for others.
	if os.Geteuid() != 0 {
		locked := filepath.Join(tmp, "locked.csv")
		mustWrite(t, locked, "a\n1\n")
		if err := os.Chmod(locked, 0); err != nil {
			t.Fatal(err)
		}
		_, terr := Search(context.Background(), config.ScopeConfig{Name: "s", Kind: KindDataset, Path: locked}, Query{Text: "1", MaxResults: 5}, Limits{})
		if code(terr) != task.ScopeUnavailable {
			t.Errorf("unreadable: got %v", terr)
		}
	}
}

func mustWrite(t testing.TB, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMalformedDatasets(t *testing.T) {
	tmp := t.TempDir()
	cases := map[string]string{
		"ragged.csv":    "id,b\n1,2\n3\n",
		"badquote.csv":  "id,b\n1,\"open\n",
		"notobj.jsonl":  "{\"id\":1}\n[1,2]\n",
		"nopk.jsonl":    "{\"id\":1,\"t\":\"x\"}\n{\"t\":\"y\"}\n",
		"objpk.jsonl":   "{\"id\":{\"a\":1}}\n",
		"twovals.jsonl": "{\"id\":1} {\"id\":2}\n",
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(tmp, name)
			mustWrite(t, p, body)
			_, terr := Search(context.Background(), config.ScopeConfig{Name: "d", Kind: KindDataset, Path: p, PrimaryKey: "id"}, Query{Text: "x", MaxResults: 5}, Limits{})
			if code(terr) != task.ExecutionFailed {
				t.Fatalf("got %v, want EXECUTION_FAILED", terr)
			}
		})
	}
}

// steppingClock advances a fixed step each time it is read.
func steppingClock(step time.Duration) func() time.Time {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		now = now.Add(step)
		return now
	}
}

func TestWallClock(t *testing.T) {
	scopes := fixtures(t)
	for _, name := range []string{"tree", "maildir", "mbox", "contacts", "records"} {
		sc := scopeNamed(t, scopes, name)
		// Each read of the clock moves it 20 s: the third read is past 30 s.
		hs, terr := Search(context.Background(), sc, Query{Text: "e", MaxResults: 10}, Limits{Clock: steppingClock(20 * time.Second)})
		if code(terr) != task.ResourceExhausted || len(hs.Hits) != 0 {
			t.Errorf("%s: got %v with %d hits, want RESOURCE_EXHAUSTED and none", name, terr, len(hs.Hits))
		}
		// A generous budget on the same clock completes.
		if _, terr := Search(context.Background(), sc, Query{Text: "e", MaxResults: 10}, Limits{Timeout: time.Hour, Clock: steppingClock(time.Second)}); terr != nil {
			t.Errorf("%s: %v", name, terr)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, terr := Search(ctx, scopeNamed(t, scopes, "tree"), Query{Text: "e", MaxResults: 10}, Limits{}); code(terr) != task.ExecutionFailed {
		t.Errorf("cancelled: got %v", terr)
	}
	dctx, dcancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer dcancel()
	if _, terr := Search(dctx, scopeNamed(t, scopes, "mbox"), Query{Text: "e", MaxResults: 10}, Limits{}); code(terr) != task.ResourceExhausted {
		t.Errorf("caller deadline: got %v", terr)
	}
}

func TestMemoryBound(t *testing.T) {
	scopes := fixtures(t)
	tmp := t.TempDir()
	big := strings.Repeat("lorem ipsum ", 20000) // 240 KB
	mbox := filepath.Join(tmp, "big.mbox")
	mustWrite(t, mbox, "From a@b Mon Jan  1 00:00:00 2024\nSubject: big\n\n"+big+"\n")
	csvp := filepath.Join(tmp, "big.csv")
	mustWrite(t, csvp, "id,text\n1,\""+big+"\"\n")
	jsonl := filepath.Join(tmp, "big.jsonl")
	mustWrite(t, jsonl, `{"id":"1","text":"`+big+"\"}\n")
	md := filepath.Join(tmp, "md")
	if err := os.MkdirAll(filepath.Join(md, "cur"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(md, "cur", "1.M1.h:2,"), "Subject: big\n\n"+big)
	b64 := filepath.Join(tmp, "b64.mbox")
	// A small raw message whose decoded body is large: the decoded text is charged too.
	var enc bytes.Buffer
	enc.WriteString("From a@b Mon Jan  1 00:00:00 2024\nSubject: b64\nContent-Transfer-Encoding: base64\n\n")
	enc.WriteString(strings.Repeat("QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB\n", 2000))
	mustWrite(t, b64, enc.String())

	small := Limits{MemoryBytes: 200 << 10}
	for _, sc := range []config.ScopeConfig{
		{Name: "m", Kind: KindEmails, Path: mbox},
		{Name: "c", Kind: KindDataset, Path: csvp, PrimaryKey: "id"},
		{Name: "j", Kind: KindDataset, Path: jsonl, PrimaryKey: "id"},
		{Name: "d", Kind: KindEmails, Path: md},
	} {
		hs, terr := Search(context.Background(), sc, Query{Text: "lorem", MaxResults: 10}, small)
		if code(terr) != task.ResourceExhausted || len(hs.Hits) != 0 {
			t.Errorf("%s: got %v, %d hits; want RESOURCE_EXHAUSTED and none", sc.Name, terr, len(hs.Hits))
		}
		if hs, terr := Search(context.Background(), sc, Query{Text: "lorem", MaxResults: 10}, Limits{MemoryBytes: 2 << 20}); terr != nil || hs.Count != 1 {
			t.Errorf("%s with 2 MB: %v, count %d", sc.Name, terr, hs.Count)
		}
	}
	// 128 KB of base64 decodes to 96 KB. The reader's 64 KB buffer and the
	// raw message fit in 224 KB; adding the decoded body does not.
	_, terr := Search(context.Background(), config.ScopeConfig{Name: "b", Kind: KindEmails, Path: b64}, Query{Text: "AAAA", MaxResults: 10}, Limits{MemoryBytes: 224 << 10})
	if code(terr) != task.ResourceExhausted {
		t.Errorf("decoded body: got %v", terr)
	}
	// The retained results are charged: a dozen file hits do not fit in 1 KB.
	_, terr = Execute(context.Background(), scopes, "t", SearchFiles, inputs("e", "tree", 1000), Limits{MemoryBytes: 1 << 10})
	if code(terr) != task.ResourceExhausted {
		t.Errorf("retained results: got %v", terr)
	}
}

func TestSnippet(t *testing.T) {
	text := strings.Repeat("a", 100) + "\nNEEDLE\t" + strings.Repeat("é", 100)
	s, ms, me := snippet(text, 101, 6)
	if s[ms:me] != "NEEDLE" {
		t.Fatalf("offsets: %q", s[ms:me])
	}
	want := "…" + strings.Repeat("a", 39) + " NEEDLE " + strings.Repeat("é", 39) + "…"
	if s != want {
		t.Errorf("got %q\nwant %q", s, want)
	}
	s, ms, me = snippet("short", 0, 5)
	if s != "short" || ms != 0 || me != 5 {
		t.Errorf("short: %q %d %d", s, ms, me)
	}
	// White space at the ends of the text is not context and earns no "…".
	s, ms, me = snippet("\n\n  body text\n\n", 4, 4)
	if s != "body text" || s[ms:me] != "body" {
		t.Errorf("trimmed: %q %d %d", s, ms, me)
	}
}

func TestMboxFraming(t *testing.T) {
	in := "\n\nFrom a Mon Jan  1 00:00:00 2024\nSubject: one\n\nbody\n>From quoted\n>>>From thrice\n> From not a From line\nFrom in paragraph\n\n" +
		"From b Tue Jan  2 00:00:00 2024\r\nSubject: two\r\n\r\nline\r\n\r\n" +
		"From c Wed Jan  3 00:00:00 2024\nSubject: three\n\nlast line without newline"
	mr := newMboxReader(strings.NewReader(in))
	var got []string
	for {
		from, raw, tooBig, err := mr.Next(1 << 20)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		if tooBig {
			t.Fatal("tooBig")
		}
		got = append(got, from+"|"+string(raw))
	}
	want := []string{
		"From a Mon Jan  1 00:00:00 2024|Subject: one\n\nbody\nFrom quoted\n>>From thrice\n> From not a From line\nFrom in paragraph\n",
		"From b Tue Jan  2 00:00:00 2024|Subject: two\r\n\r\nline\r\n",
		"From c Wed Jan  3 00:00:00 2024|Subject: three\n\nlast line without newline",
	}
	if strings.Join(got, "#") != strings.Join(want, "#") {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if d, ok := fromLineDate("From a Mon Jan  1 09:08:07 2024"); !ok || d.Format(time.RFC3339) != "2024-01-01T09:08:07Z" {
		t.Errorf("from date: %v %v", d, ok)
	}
	if _, ok := fromLineDate("From a sometime"); ok {
		t.Error("bad from date parsed")
	}
}

func TestOpen(t *testing.T) {
	scopes := fixtures(t)
	doc, err := Open(scopeNamed(t, scopes, "tree"), "notes/résumé-report.txt")
	if err != nil || !strings.Contains(doc.Text, "contents of tree/notes/résumé-report.txt") {
		t.Errorf("file: %v %q", err, doc.Text)
	}
	for _, bad := range []string{"../scope.go", "/etc/passwd", "link-report.txt", "notes/linked-reports/x.txt", "reports", "nope.txt", ""} {
		if _, err := Open(scopeNamed(t, scopes, "tree"), bad); err == nil {
			t.Errorf("file %q: opened", bad)
		}
	}
	doc, err = Open(scopeNamed(t, scopes, "mbox"), "4")
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != "Résumé in Latin-1" || !strings.Contains(doc.Text, "Grüße aus München") || fieldValue(doc, "From") != "Davé Müller <dave@example.org>" || fieldValue(doc, "received_timestamp") != "2024-01-04T10:00:00Z" {
		t.Errorf("mbox 4: %+v", doc)
	}
	doc, err = Open(scopeNamed(t, scopes, "mbox"), "5")
	if err != nil || !strings.Contains(doc.Text, "kiwi") || strings.Contains(doc.Text, "papaya") {
		t.Errorf("mbox 5: %v %q", err, doc.Text)
	}
	for _, bad := range []string{"0", "10", "x"} {
		if _, err := Open(scopeNamed(t, scopes, "mbox"), bad); err == nil {
			t.Errorf("mbox %q: opened", bad)
		}
	}
	doc, err = Open(scopeNamed(t, scopes, "maildir"), "1704153600.M2P1.host")
	if err != nil || doc.Title != "No date header here" || fieldValue(doc, "received_timestamp") != "2024-01-02T00:00:00Z" {
		t.Errorf("maildir: %v %+v", err, doc)
	}
	doc, err = Open(scopeNamed(t, scopes, "contacts"), "A7")
	if err != nil || fieldValue(doc, "name") != "Grace Hopper" || fieldValue(doc, "note") != "Compiler pioneer\nand café regular" {
		t.Errorf("csv: %v %+v", err, doc)
	}
	doc, err = Open(scopeNamed(t, scopes, "records"), "42")
	if err != nil || fieldValue(doc, "title") != "Numeric sku café" {
		t.Errorf("jsonl: %v %+v", err, doc)
	}
	if _, err := Open(scopeNamed(t, scopes, "contacts"), "999"); err == nil {
		t.Error("csv 999 opened")
	}
}

func fieldValue(d Document, name string) string {
	for _, f := range d.Fields {
		if f.Name == name {
			return f.Value
		}
	}
	return "<missing>"
}

func TestWriteDemo(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	scopes, err := WriteDemo(a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteDemo(b); err != nil {
		t.Fatal(err)
	}
	// Deterministic: both demo homes hold the same bytes.
	for _, rel := range []string{"Mail/archive.mbox", "contacts.csv", "Mail/INBOX/new/1717408800.M3P100.demo", "Mail/INBOX/cur/1717322400.M2P100.demo:2,RS"} {
		x, err1 := os.ReadFile(filepath.Join(a, rel))
		y, err2 := os.ReadFile(filepath.Join(b, rel))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs: %v %v", rel, err1, err2)
		}
	}
	want := map[string]string{
		"mail":     "1717236000.M1P100.demo | 1717322400.M2P100.demo",
		"archive":  "2",
		"contacts": "10",
	}
	for _, sc := range scopes {
		if got := hitIDs(hitsOf(t, scopes, sc.Name, "budget")); got != want[sc.Name] {
			t.Errorf("%s: got %s, want %s", sc.Name, got, want[sc.Name])
		}
	}
	if got := hitIDs(hitsOf(t, scopes, "mail", "123 tests")); got != "1717408800.M3P100.demo" {
		t.Errorf("base64 demo body: %s", got)
	}
}

// TestIdempotentAcrossProcesses runs the same task in a fresh process and
// compares bytes: nothing in the output may depend on process state (map
// order, addresses, the time).
func TestIdempotentAcrossProcesses(t *testing.T) {
	if os.Getenv("VIGIL_SCOPE_HELPER") != "" {
		return
	}
	scopes := fixtures(t)
	cfg, err := json.Marshal(scopes)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []goldenCase{goldenCases[0], goldenCases[5], goldenCases[18], goldenCases[24]} {
		out, terr := Execute(context.Background(), scopes, "t-"+c.name, c.capability, inputs(c.query, c.scope, c.max), Limits{})
		if terr != nil {
			t.Fatal(terr)
		}
		want, _ := json.Marshal(out)
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperExecute$")
		cmd.Env = append(os.Environ(), "VIGIL_SCOPE_HELPER=1", "SCOPES="+string(cfg),
			"TASK=t-"+c.name, "CAP="+c.capability, "INPUTS="+string(inputs(c.query, c.scope, c.max)))
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: helper: %v", c.name, err)
		}
		got, _, _ = bytes.Cut(got, []byte("\n"))
		if !bytes.Equal(got, want) {
			t.Errorf("%s: other process gave\n%s\nwant\n%s", c.name, got, want)
		}
	}
}

// TestHelperExecute is the other process of TestIdempotentAcrossProcesses.
func TestHelperExecute(t *testing.T) {
	if os.Getenv("VIGIL_SCOPE_HELPER") == "" {
		return
	}
	var scopes []config.ScopeConfig
	if err := json.Unmarshal([]byte(os.Getenv("SCOPES")), &scopes); err != nil {
		t.Fatal(err)
	}
	out, terr := Execute(context.Background(), scopes, os.Getenv("TASK"), os.Getenv("CAP"), json.RawMessage(os.Getenv("INPUTS")), Limits{})
	if terr != nil {
		t.Fatal(terr)
	}
	b, _ := json.Marshal(out)
	os.Stdout.Write(append(b, '\n'))
}
