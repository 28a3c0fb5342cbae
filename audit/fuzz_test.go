package audit

import (
	"bytes"
	"reflect"
	"testing"
)

// FuzzParseLine: reading an audit line never panics, and anything accepted
// re-encodes to exactly the bytes read (so no edit can hide in a form JSON
// tolerates). Accepted lines also go through the Chain without panicking.
func FuzzParseLine(f *testing.F) {
	path := newLog(f, 6)
	for _, l := range readLines(f, path) {
		f.Add(bytes.TrimSuffix(l, []byte("\n")))
	}
	for _, s := range []string{"", "{}", "null", "garbage", `{"seq":0}`, `{"seq":-1,"details":[]}`,
		`{"seq":1e3}`, `{"SEQ":0}`, `{"details":{"a":1,"a":2}}`, "\xff\xfe", `{"seq":0,"time":"\u2028"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := parseLine(line)
		c := NewChain()
		c.Feed(line)
		// the byte-level reader agrees with the decoder on every input
		if fe, ferr := parseLineFast(line); ferr != err || err == nil && !reflect.DeepEqual(fe, e) {
			t.Fatalf("parseLineFast %#v %v; parseLine %#v %v", fe, ferr, e, err)
		}
		if c2 := NewChain(); c2.feedLine(line) != (c.Bad() == nil) || !reflect.DeepEqual(c2.Bad(), c.Bad()) {
			t.Fatalf("feedLine %+v; Feed %+v", c2.Bad(), c.Bad())
		}
		if err != nil {
			return
		}
		again, err := e.Line()
		if err != nil {
			t.Fatalf("accepted line does not re-encode: %v", err)
		}
		if !bytes.Equal(again, line) {
			t.Fatalf("accepted %q but it re-encodes as %q", line, again)
		}
		if _, err := e.ComputeHash(); err != nil {
			t.Fatalf("accepted line cannot be hashed: %v", err)
		}
		if h := lineHash(line, e); h != mustHash(t, e) {
			t.Fatalf("lineHash %s differs from ComputeHash %s", h, mustHash(t, e))
		}
	})
}

func mustHash(t *testing.T, e Entry) string {
	h, err := e.ComputeHash()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
