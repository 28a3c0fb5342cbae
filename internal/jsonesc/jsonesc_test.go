package jsonesc

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// TestAppendAgreesWithEncodingJSON: every string body encoding/json accepts
// decodes to the value it decodes to.
func TestAppendAgreesWithEncodingJSON(t *testing.T) {
	for _, body := range []string{
		``, `plain`, `a\"b\\c\/d`, `\b\f\n\r\t`, `\u00e9\u00E9`, `\u2028x\u2029`,
		`\ud83d\ude00`, `\uD83D\uDE00`, `\ud83d`, `\ud83dx`, `\ud83d\u0041`, `\ude00`, `\u0000`,
		`é and ☃`, `\ud83d\ud83d\ude00`,
	} {
		var want string
		if err := json.Unmarshal([]byte(`"`+body+`"`), &want); err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		got, ok := Append(nil, []byte(body))
		if !ok || string(got) != want {
			t.Errorf("Append(%q) = %q, %v; encoding/json: %q", body, got, ok, want)
		}
	}
}

// TestRefusesWhatJSONRefuses: a bad or cut escape is refused, never read past.
func TestRefusesWhatJSONRefuses(t *testing.T) {
	for _, body := range []string{`\`, `\x`, `\u12`, `\u12g4`, `\ud83d\uzzzz`, `ab\q`} {
		if _, ok := Append(nil, []byte(body)); ok {
			t.Errorf("Append(%q) accepted a bad escape", body)
		}
	}
}

func FuzzAppend(f *testing.F) {
	f.Add([]byte(`a\u00e9\ud83d\ude00\n`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if !utf8.Valid(body) {
			return // bytes outside escapes are copied as they are (see Append)
		}
		got, ok := Append(nil, body)
		var want string
		err := json.Unmarshal(append(append([]byte(`"`), body...), '"'), &want)
		if err == nil && (!ok || string(got) != want) {
			t.Fatalf("Append(%q) = %q, %v; encoding/json: %q", body, got, ok, want)
		}
	})
}
