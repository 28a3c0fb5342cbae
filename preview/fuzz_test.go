package preview

import (
	"encoding/json"
	"strings"
	"testing"
)

// jsonStrings collects every key and string value of a JSON document.
func jsonStrings(b []byte) ([]string, bool) {
	n, err := parseJSON(b)
	if err != nil {
		return nil, false
	}
	var out []string
	var walk func(*jnode)
	walk = func(n *jnode) {
		out = append(out, n.keys...)
		if n.kind == 's' || n.kind == 'n' {
			out = append(out, n.text)
		}
		for _, v := range n.vals {
			walk(v)
		}
	}
	walk(n)
	return out, true
}

func fuzzSeeds(f *testing.F) {
	f.Add([]byte(`{"password":"hunter22","note":"hunter22 again"}`))
	f.Add([]byte(`{"user":{"email":"jane@example.com","cards":[4111111111111111,"4111 1111 1111 1111"]}}`))
	f.Add([]byte(`[{"Authorization":"Bearer ` + cat("sk_", "live_", "abcdefghijklmnop") + `"},"078-05-1120"]`))
	f.Add([]byte(`{"url":"https://bob:pw@h/x?api_key=k&sig=s#access_token=t","primary_key":7,"monkey":"banana"}`))
	f.Add([]byte(`{"k":"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----"}`))
	f.Add([]byte(`{"credentials":{"a":[1,2,{"b":"deep secret value"}]},"x":"deep secret value"}`))
	f.Add([]byte(`"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"`))
	f.Add([]byte(`{"a":`))
	f.Add([]byte(strings.Repeat("[", 300) + strings.Repeat("]", 300)))
	f.Add([]byte("\xff\xfe{\"password\":1}"))
}

// FuzzMaskJSON: never panics, valid JSON stays valid, and no secret the masker found in the input (by shape
// or by field name) survives anywhere in the output's keys and strings.
func FuzzMaskJSON(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		out := MaskJSON(in)
		m := newMasker()
		n, err := parseJSON(in)
		if err == nil {
			m.maskNode(n, "")
			if !json.Valid(out) {
				t.Fatalf("valid input gave invalid output: %q -> %q", in, out)
			}
		} else {
			m.text(string(in), true)
		}
		texts, ok := jsonStrings(out)
		if !ok {
			texts = []string{string(out)}
		}
		for s := range m.secrets {
			for _, txt := range texts {
				if strings.Contains(txt, s) {
					t.Fatalf("secret %q survived in %q (input %q)", s, out, in)
				}
			}
		}
	})
}

// FuzzMaskString: never panics and no detected secret survives.
func FuzzMaskString(f *testing.F) {
	f.Add("password=hunter22 and hunter22")
	f.Add("card 4111 1111 1111 1111 ssn 078-05-1120 mail jane@example.com")
	f.Add("https://bob:pw@h/x?token=abc#access_token=xyz")
	f.Add("Authorization: Bearer " + cat("sk_", "test_", "0123456789"))
	f.Add("/media/token_ring.mp3")
	f.Fuzz(func(t *testing.T, in string) {
		out := MaskString(in)
		m := newMasker()
		m.text(in, true)
		for s := range m.secrets {
			if strings.Contains(out, s) {
				t.Fatalf("secret %q survived: %q -> %q", s, in, out)
			}
		}
	})
}
