package preview

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// ruleCase is one rule's must-mask table (input → exact output) and must-not-mask list (left unchanged).
type ruleCase struct {
	rule string
	mask map[string]string
	keep []string
}

func valueRules(t *testing.T) []ruleCase {
	jwt1 := realJWT(t, "agent-1")
	pemKey := realPEM(t, 1)
	return []ruleCase{
		{
			rule: "pem",
			mask: map[string]string{
				pemKey: "-----BEGIN PRIVATE KEY-----" + Fixed + "-----END PRIVATE KEY-----\n",
				"key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----": "key:\n-----BEGIN RSA PRIVATE KEY-----" + Fixed + "-----END RSA PRIVATE KEY-----",
				"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE truncated":           "-----BEGIN OPENSSH PRIVATE KEY-----" + Fixed + "-----END OPENSSH PRIVATE KEY-----",
			},
			keep: []string{"-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----", "-----BEGIN CERTIFICATE-----"},
		},
		{
			rule: "jwt",
			mask: map[string]string{
				jwt1:                                   "eyJ..." + jwt1[len(jwt1)-4:],
				"lease=" + jwt1:                        "lease=eyJ..." + jwt1[len(jwt1)-4:],
				"eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.": "eyJ...In0.",
			},
			keep: []string{"eyJhbGciOiJIUzI1NiJ9", "eyJ.eyJ.x", "the eyJ prefix"},
		},
		{
			rule: "vendor keys",
			mask: map[string]string{
				cat("sk_", "live_", "abcdefghijklmnopqrstwxyz"):       "sk_...wxyz",
				cat("rk_", "test_", "0123456789ABCDEFabcd"):           "rk_...abcd",
				cat("key ", "sk_", "prod_", "0123456789wxyz", " end"): "key sk_...wxyz end",
				cat("AKIA", "IOSFODNN7EXAMPLE"):                       "AKIA...MPLE",
				cat("ASIA", "ABCDEFGHIJKLMNOP"):                       "ASIA...MNOP",
				cat("ghp_", rep("a", 32), "wxyz"):                     "ghp_...wxyz",
				cat("gho_", rep("B", 32), "1234"):                     "gho_...1234",
				cat("github_pat_", rep("C", 78), "wxyz"):              "github_pat_...wxyz",
				cat("xoxb-", "123456789012-1234567890123-abcdwxyz"):   "xoxb-...wxyz",
				cat("xapp-", "1-A0123456789-1234567890-abwxyz"):       "xapp-...wxyz",
				cat("glpat-", "abcdefghij0123456789"):                 "glpat-...6789",
				cat("AIza", "SyD", rep("x", 28), "wxyz"):              "AIza...wxyz",
				cat("sk-", "proj-", rep("Q", 40), "wxyz"):             "sk-...wxyz",
				cat("sk-", rep("z", 44), "wxyz"):                      "sk-...wxyz",
				cat("sk-", "ant-", "api03-", rep("k", 60), "wxyz"):    "sk-ant-...wxyz",
				cat("whsec_", rep("w", 28), "wxyz"):                   "whsec_...wxyz",
			},
			keep: []string{
				cat("task_", "test_", "0123456789abcdef"), // "sk_test_" inside a word is not a Stripe key
				cat("pk_", "live_", "0123456789abcdef"),   // publishable keys are public
				"sk-learn", "ghp_short", "AKIA", "disk-ant-notakey",
			},
		},
		{
			rule: "url userinfo and query",
			mask: map[string]string{
				"https://bob:hunter2@example.com/x":               "https://bob:********@example.com/x",
				"git clone https://ghp_tokenvalue@github.com/a/b": "git clone https://********@github.com/a/b",
				"GET https://h/a?api_key=abc123&page=2&sig=ff00":  "GET https://h/a?api_key=********&page=2&sig=********",
				"https://h/cb#access_token=xyz&state=1":           "https://h/cb#access_token=********&state=1",
				"https://h/a?Token=abc.":                          "https://h/a?Token=********.",
				"https://h/u/jane%40example.com/x":                "https://h/u/j***@example.com/x",
			},
			keep: []string{"https://example.com/media/token_ring.mp3", "file:///media/token_ring.mp3",
				"https://h/a?page=2&q=monkey", "https://h/path?primary_key=7"},
		},
		{
			rule: "secret name=value in text",
			mask: map[string]string{
				"login password=hunter2 ok":            "login password=******** ok",
				`{"client_secret": "abc def"}`:         `{"client_secret": "********"}`,
				"Authorization: Bearer opaquevalue123": "Authorization: Bearer ********",
				"X-Api-Key: q1w2e3r4":                  "X-Api-Key: ********",
			},
			keep: []string{"monkey: banana", "primary_key=42", "keyboard=us", "page=2", "status: token_ring.mp3 playing"},
		},
		{
			rule: "credit card",
			mask: map[string]string{
				"4111111111111111":          "****-****-****-1111",
				"card 4111 1111 1111 1111.": "card ****-****-****-1111.",
				"5500-0000-0000-0004":       "****-****-****-0004",
				"amex 378282246310005":      "amex ****-****-****-0005",
				"3782 822463 10005":         "****-****-****-0005",
				"2024 4242424242424242":     "2024 ****-****-****-4242",
				"6011000990139424":          "****-****-****-9424",
				"4222222222222":             "****-****-****-2222",
				"cc:4000056655665556":       "cc:****-****-****-5556",
			},
			keep: []string{"4111111111111112", "4111 1111 1111 1112", "1234567890123", "12345678901234567890",
				"a4111111111111111b", "4111111111111111abc", "sha 9f86d081884c7d659a2feaa0c55ad015"},
		},
		{
			rule: "ssn",
			mask: map[string]string{
				"123-45-6789":      "***-**-6789",
				"ssn: 078 05 1120": "ssn: ***-**-1120",
				"id 219.09.9999.":  "id ***-**-9999.",
			},
			keep: []string{"000-12-3456", "666-12-3456", "912-34-5678", "123-00-4567", "123-45-0000", "111-11-1111",
				"123-45.6789", "123 45-6789", "1123-45-6789", "123-45-67890", "2024-01-15"},
		},
		{
			rule: "email",
			mask: map[string]string{
				"john@example.com":                 "j***@example.com",
				"mail Jane.Doe+tag@mail.co.uk now": "mail J***@mail.co.uk now",
				"<x@y.io>":                         "<x***@y.io>",
			},
			keep: []string{"j***@example.com", "user@localhost", "@handle", "a@b", "monkey"},
		},
		{
			rule: "media paths",
			keep: []string{"/media/token_ring.mp3", "/media/secret_garden.mkv", "/music/keyboard cat.mp3",
				"/videos/monkey_island.mp4", "/media/passwords-are-fun.ogg"},
		},
	}
}

func TestMaskStringRules(t *testing.T) {
	for _, rc := range valueRules(t) {
		t.Run(rc.rule, func(t *testing.T) {
			for in, want := range rc.mask {
				if got := MaskString(in); got != want {
					t.Errorf("must mask %q:\n got %q\nwant %q", in, got, want)
				}
			}
			for _, in := range rc.keep {
				if got := MaskString(in); got != in {
					t.Errorf("must not mask %q, got %q", in, got)
				}
			}
		})
	}
}

func TestMaskFieldRules(t *testing.T) {
	stripe := cat("sk_", "live_", "abcdefghijklmnopwxyz")
	jwt1 := realJWT(t, "a")
	must := []struct{ name, value, want string }{
		{"password", "hunter2", Fixed},
		{"Password", "a much longer passphrase than eight", Fixed},
		{"new_password", "x", Fixed},
		{"userPassword", "x", Fixed},
		{"passwd", "x", Fixed},
		{"pwd", "", Fixed},
		{"cvv", "123", Fixed},
		{"otp", "123456", Fixed},
		{"card_number", "4111 1111 1111 1111", "****-****-****-1111"},
		{"cardNumber", "5555555555554444", "****-****-****-4444"},
		{"credit_card", "123", Fixed},
		{"ssn", "078-05-1120", "***-**-1120"},
		{"SSN", "12", Fixed},
		{"api_key", stripe, "sk_...wxyz"},
		{"X-Api-Key", "opaque-value", Fixed},
		{"apiKey", "opaque-value", Fixed},
		{"secretKey", "opaque-value", Fixed},
		{"access_token", jwt1, "eyJ..." + jwt1[len(jwt1)-4:]},
		{"refresh_token", "opaque", Fixed},
		{"csrfToken", "opaque", Fixed},
		{"client_secret", "opaque", Fixed},
		{"aws_secret_access_key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", Fixed},
		{"private_key", "x", Fixed},
		{"key", "AIzaNOTREALLY", Fixed},
		{"session", "abc", Fixed},
		{"credentials", "u:p", Fixed},
		{"auth", "u:p", Fixed},
		{"Authorization", "Bearer " + stripe, "Bearer sk_...wxyz"},
		{"Authorization", "Bearer " + jwt1, "Bearer eyJ..." + jwt1[len(jwt1)-4:]},
		{"authorization", "Bearer opaque-token-123", "Bearer ********"},
		{"Authorization", "Basic dXNlcjpwYXNz", "Basic ********"},
		{"Authorization", "token ghp_notvalidshape", "token ********"},
		{"Authorization", "justatoken", Fixed},
		{"Proxy-Authorization", "Basic abc", "Basic ********"},
		{"Cookie", "a=1; session=xyz", "a=********; session=********"},
		{"Set-Cookie", "sid=abc; Path=/; HttpOnly", "sid=********; Path=/; HttpOnly"},
		{"email", "jane@example.com", "j***@example.com"},
		{"note", "card 4111111111111111", "card ****-****-****-1111"},
	}
	for _, c := range must {
		if got := MaskField(c.name, c.value); got != c.want {
			t.Errorf("MaskField(%q, %q) = %q, want %q", c.name, c.value, got, c.want)
		}
	}
	keep := []struct{ name, value string }{
		{"primary_key", "42"}, {"primaryKey", "42"}, {"public_key", "ssh-ed25519 AAAA"}, {"sort_key", "name"},
		{"idempotency_key", "abc-123"}, {"key_id", "k1"}, {"keyboard", "us"}, {"keyboard_layout", "dvorak"},
		{"monkey", "banana"}, {"turkey", "roast"}, {"hockey", "puck"}, {"keyword", "cats"},
		{"media_content_id", "/media/token_ring.mp3"}, {"entity_id", "media_player.tv"}, {"secretary", "Ann"},
		{"seek_position", "123"}, {"compass", "north"}, {"passenger", "Bob"},
	}
	for _, c := range keep {
		if got := MaskField(c.name, c.value); got != c.value {
			t.Errorf("MaskField(%q, %q) = %q, must not mask", c.name, c.value, got)
		}
	}
}

func TestFixedMaskNeverRevealsLength(t *testing.T) {
	for _, v := range []string{"", "a", "hunter2", strings.Repeat("x", 500)} {
		if got := MaskField("password", v); got != Fixed {
			t.Errorf("password of length %d masked to %q", len(v), got)
		}
	}
}

func TestMaskStringScrubsCopies(t *testing.T) {
	got := MaskString("password=hunter22 then later hunter22 again")
	if strings.Contains(got, "hunter22") {
		t.Fatalf("copy of a masked password survived: %q", got)
	}
}

func TestMaskURL(t *testing.T) {
	cases := map[string]string{
		"https://u:p%40ss@h.example/a/b?x=1&password=p&empty&=v#frag": "https://u:********@h.example/a/b?x=1&password=********&empty&=v#frag",
		"/api/states/media_player.tv?token=abc":                       "/api/states/media_player.tv?token=********",
		"file:///media/token_ring.mp3":                                "file:///media/token_ring.mp3",
		"http://[::1]:8123/api?api%5Fkey=z":                           "http://[::1]:8123/api?api%5Fkey=********",
		"https://h/x?q=4111111111111111":                              "https://h/x?q=****-****-****-1111",
		"https://h/x?q=4111%201111%201111%201111":                     "https://h/x?q=****-****-****-1111",
		"":                      "",
		"%zz://bad url?token=x": "%zz://bad url?token=********",
	}
	for in, want := range cases {
		if got := MaskURL(in); got != want {
			t.Errorf("MaskURL(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

func TestMaskHeaders(t *testing.T) {
	stripe := cat("sk_", "test_", "0123456789abcdwxyz")
	in := map[string]string{"Authorization": "Bearer " + stripe, "Accept": "application/json", "X-Note": "mail bob@example.com"}
	got := MaskHeaders(in)
	want := map[string]string{"Authorization": "Bearer sk_...wxyz", "Accept": "application/json", "X-Note": "mail b***@example.com"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	if in["Authorization"] != "Bearer "+stripe {
		t.Fatal("input was modified")
	}
	h := http.Header{"Cookie": {"a=b"}, "X-Auth-Token": {"t1", "t2"}, "Accept": {"*/*"}}
	gh := MaskHeaders(h)
	wh := http.Header{"Cookie": {"a=********"}, "X-Auth-Token": {Fixed, Fixed}, "Accept": {"*/*"}}
	if !reflect.DeepEqual(gh, wh) {
		t.Fatalf("got %v want %v", gh, wh)
	}
}

func TestMaskForm(t *testing.T) {
	cases := map[string]string{
		"user=bob&password=hunter2&remember=1":      "user=bob&password=********&remember=1",
		"email=jane%40example.com&card_number=4111": "email=j***@example.com&card_number=********",
		"q=monkey+business&primary_key=7":           "q=monkey+business&primary_key=7",
		"flag&token":                                "flag&token=********",
		"":                                          "",
	}
	for in, want := range cases {
		if got := MaskForm(in); got != want {
			t.Errorf("MaskForm(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

func TestMaskJSON(t *testing.T) {
	stripe := cat("sk_", "live_", "0123456789abcdwxyz")
	in := `{"user":{"Email":"jane@example.com","password":"p","Primary_Key":7,"cards":[4111111111111111,"4111-1111-1111-1111",{"cvv":123}]},` +
		`"credentials":{"user":"u","pass":"s3cretvalue"},"note":"s3cretvalue","k":"` + stripe + `","n":null,"b":true,"e":{},"a":[]}`
	want := `{"user":{"Email":"j***@example.com","password":"********","Primary_Key":7,"cards":["****-****-****-1111","****-****-****-1111",{"cvv":"********"}]},` +
		`"credentials":"********","note":"********","k":"sk_...wxyz","n":null,"b":true,"e":{},"a":[]}`
	if got := string(MaskJSON([]byte(in))); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// Not JSON: masked as text rather than passed through.
	if got := string(MaskJSON([]byte(`{"password": "hunter2"`))); got != `{"password": "********"` {
		t.Fatalf("invalid JSON fallback: %s", got)
	}
	deep := strings.Repeat("[", 1000) + `"4111111111111111"` + strings.Repeat("]", 1000)
	if strings.Contains(string(MaskJSON([]byte(deep))), "4111111111111111") {
		t.Fatal("deeply nested card survived")
	}
}

// notesNames is the field-name list of shared/notes/approvals.md; every one must be masked in every case.
var notesNames = []string{"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key",
	"api_key", "apikey", "x-auth-token", "access_token", "refresh_token", "token", "secret", "password", "passwd",
	"pwd", "auth", "credentials", "private_key", "privatekey", "session", "sessionid", "ssn", "card_number",
	"credit_card", "cvv", "otp"}

func TestNotesNamesAreMasked(t *testing.T) {
	const v = "v4lue-0123"
	for _, n := range notesNames {
		for _, name := range []string{n, strings.ToUpper(n), strings.ToUpper(n[:1]) + n[1:]} {
			if got := MaskField(name, v); got == v || strings.Contains(got, v) {
				t.Errorf("MaskField(%q) = %q, not masked", name, got)
			}
			// The same names in free text ("name=value") and in JSON bodies.
			if got := MaskString(name + "=" + v); strings.Contains(got, v) {
				t.Errorf("MaskString(%q=…) = %q", name, got)
			}
			if got := string(MaskJSON([]byte(`{"a":{"` + name + `":"` + v + `"}}`))); strings.Contains(got, v) {
				t.Errorf("MaskJSON with key %q = %s", name, got)
			}
		}
	}
	// The free-text prefilter must admit every name the classifier treats as secret.
	for name := range exactNames {
		if !mayHaveSecretName(name + "=x") {
			t.Errorf("prefilter skips secret name %q", name)
		}
	}
}

// Content hashes, UUIDs and timestamps pass through audit entries and previews; masking them would break
// verification, so none may look like a card, an SSN or a key.
func TestHashesAndIDsAreNotMasked(t *testing.T) {
	for i := range 2000 {
		sum := sha256.Sum256([]byte{byte(i), byte(i >> 8)})
		h := hex.EncodeToString(sum[:])
		uuid := h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
		for _, s := range []string{h, "sha256:" + h, uuid, "2026-11-22T02:46:37Z"} {
			if got := MaskString(s); got != s {
				t.Fatalf("masked %q to %q", s, got)
			}
		}
	}
}

// A URL nested in URLs' query values deeper than maxURLDepth is masked whole
// (so a secret at its bottom stays hidden), and a value 20,000 levels deep
// is masked in about the time of one level per byte: level by level it took
// longer than a test may run. See also BenchmarkMaskStringNestedURLs.
func TestMaskNestedURLsBounded(t *testing.T) {
	secret := "abcdef123456ghijkl"
	for _, n := range []int{3, 20000} {
		s := strings.Repeat("https://a.b/?x=", n) + "https://a.b/?access_token=" + secret
		if got := MaskString(s); strings.Contains(got, secret) {
			t.Errorf("%d nested URLs: the token at the bottom shows: %.200q", n, got)
		}
	}
	if got, want := MaskString("https://a.b/?next=https://c.d/?access_token="+secret), "https://a.b/?next=https:%2F%2Fc.d%2F%3Faccess_token%3D********"; got != want {
		t.Errorf("two nested URLs: got %q, want %q", got, want)
	}
}

// A long secret's copies are scrubbed too, and in time linear in its length:
// the strings.Replacer built for one long pattern costs its length squared
// (a 1 MB password took half an hour). See BenchmarkMaskFieldLongPassword.
func TestMaskLongSecretScrubbedInLinearTime(t *testing.T) {
	pw := strings.Repeat("a", 1<<20)
	got := string(MaskJSON([]byte(`{"password":"` + pw + `","note":"x` + pw + `y"}`)))
	if strings.Contains(got, "aaaaaaaa") {
		t.Errorf("a copy of the long password shows: %.200q", got)
	}
	if got := MaskField("password", pw); got != Fixed {
		t.Errorf("MaskField(password, 1 MB) = %.40q, want the fixed mask", got)
	}
}

// A long run of digit groups — a list of SSNs, "4111 4111 …" — is searched
// for cards only a card's length at a time: every group was tried against
// every later one (cubic: 256 kB took hours), and still every SSN is found.
// See BenchmarkMaskStringDigitGroups.
func TestMaskLongDigitGroupRunsBounded(t *testing.T) {
	ssns := strings.Repeat("078-05-1120 ", 20000)
	got := MaskString(ssns)
	if want := strings.Repeat("***-**-1120 ", 20000); got != want {
		t.Errorf("a list of SSNs masks as %.80q…, want each one masked", got)
	}
	MaskString(strings.Repeat("4111 ", 50000))
}

// Percent-encoding nested in percent-encoding is decoded at most
// maxDecodeDepth levels deep, then masked whole: "%252525…41" loses one
// level per two bytes, and decoding them all took minutes on 256 kB.
func TestMaskNestedPercentEncodingBounded(t *testing.T) {
	s := "%" + strings.Repeat("25", 1<<17) + "41"
	if got := MaskString(s); got != Fixed {
		t.Errorf("256 kB of nested percent-encoding masks as %.80q, want the fixed mask", got)
	}
	// Double encoding, the usual case, still decodes to the secret.
	if got := MaskString("x%2570assword%253Dhunter22%2526y"); strings.Contains(got, "hunter22") {
		t.Errorf("a double-encoded password shows: %q", got)
	}
}

// Base64 wrapped over lines (MIME's columns, an indented YAML value) is
// decoded as one text: line by line, each piece of the token decoded to
// nothing any detector knew, and the wrapped token showed.
func TestMaskWrappedBase64(t *testing.T) {
	tok := cat("ghp_", "abcdefghijklmnopqrstuvwxyz0123456789")
	enc := base64.StdEncoding.EncodeToString([]byte("user: bob\ntoken: " + tok + "\n"))
	var lines []string
	for len(enc) > 20 {
		lines, enc = append(lines, enc[:20]), enc[20:]
	}
	lines = append(lines, enc)
	for _, c := range []struct{ in, want string }{
		{"data:\n  " + strings.Join(lines, "\n  ") + "\nend", "data:\n  " + Fixed + "\nend"},
		{strings.Join(lines, "\r\n"), Fixed},
	} {
		if got := MaskString(c.in); got != c.want {
			t.Errorf("MaskString(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Wrapped base64 of harmless text stays.
	for _, s := range []string{"aGVsbG8gd29ybGQgaGVsbG8g\nd29ybGQ=", "QUJDREVGR0hJSktM\nTU5PUA==\nok"} {
		if got := MaskString(s); got != s {
			t.Errorf("MaskString(%q) = %q, want it unchanged", s, got)
		}
	}
	long := strings.Repeat("QUJDREVGR0hJSktM\n", 1<<16)
	if got := MaskString(long); got != long {
		t.Errorf("1 MB of wrapped harmless base64 changed")
	}
}
