package search

import (
	"encoding/json"
	"testing"
)

// TestStrDecodesEscapesAsEncodingJSON: the backends' strings decode their
// escapes (through internal/jsonesc) to what encoding/json gives, lone and
// paired surrogates included; a bad escape is a syntax error.
func TestStrDecodesEscapesAsEncodingJSON(t *testing.T) {
	for _, body := range []string{
		`plain`, `a\"b\\c\/d`, `\b\f\n\r\t`, `\u00e9\u00E9`, `x\ud83d\ude00y`, `\ud83d`, `\ud83dz`,
		`\ud83d\u0041`, `\ude00`, `\ud83d\ud83d\ude00`, `é☃ and \u2028`,
	} {
		var want string
		if err := json.Unmarshal([]byte(`"`+body+`"`), &want); err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		for _, dst := range [][]byte{nil, make([]byte, 0, 8)} {
			s := jscan{b: []byte(`"` + body + `"`)}
			got := s.str(dst)
			if s.err != nil || string(got) != want {
				t.Errorf("str(%q) = %q, %v; encoding/json: %q", body, got, s.err, want)
			}
		}
	}
	for _, body := range []string{`\x`, `\u12g4`, `\ud83d\uzzzz`, `ab\`} {
		s := jscan{b: []byte(`"` + body + `"`)}
		if s.str(nil); s.err == nil {
			t.Errorf("str(%q) accepted a bad escape", body)
		}
	}
}
