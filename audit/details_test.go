package audit

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestDetailsCanonical: equal objects hash the same whatever their key order
// or spacing, because details are stored in RFC 8785 form.
func TestDetailsCanonical(t *testing.T) {
	forms := []string{
		`{"b":2,"a":{"y":[1,2],"x":"é"},"c":true}`,
		`{"c":true,"a":{"x":"é","y":[1,2]},"b":2}`,
		"{ \"a\" : { \"y\" : [ 1 , 2 ] , \"x\" : \"\\u00e9\" } , \"c\" : true , \"b\" : 2.0 }",
	}
	var hashes, stored []string
	for _, d := range forms {
		l, err := Open(filepath.Join(t.TempDir(), "audit.log"), stepClock())
		if err != nil {
			t.Fatal(err)
		}
		e, err := l.Append(Entry{Actor: "a", Event: EventDemo, Details: json.RawMessage(d)})
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		hashes = append(hashes, e.Hash)
		stored = append(stored, string(e.Details))
	}
	for i := range forms {
		if hashes[i] != hashes[0] || stored[i] != stored[0] {
			t.Fatalf("form %d: hash %s details %s; form 0: %s %s", i, hashes[i], stored[i], hashes[0], stored[0])
		}
	}
	if want := `{"a":{"x":"é","y":[1,2]},"b":2,"c":true}`; stored[0] != want {
		t.Fatalf("stored details %s, want %s", stored[0], want)
	}
	// a different object hashes differently
	l, _ := Open(filepath.Join(t.TempDir(), "audit.log"), stepClock())
	e, _ := l.Append(Entry{Actor: "a", Event: EventDemo, Details: json.RawMessage(`{"a":{"x":"é","y":[1,2]},"b":3,"c":true}`)})
	if e.Hash == hashes[0] {
		t.Fatal("different details, same hash")
	}
}

func TestDetailsRejected(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "audit.log"), stepClock())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{`[1,2]`, `"text"`, `42`, `null`, `true`, `{"a":`, `{"a":1}x`, `{"a":1,"a":2}`} {
		_, err := l.Append(Entry{Actor: "a", Event: EventDemo, Details: json.RawMessage(d)})
		if err == nil {
			t.Errorf("details %s accepted", d)
			continue
		}
		if !strings.HasPrefix(err.Error(), "details: ") {
			t.Errorf("details %s: error %q does not name the field", d, err)
		}
	}
	// empty details become {}
	e, err := l.Append(Entry{Actor: "a", Event: EventDemo})
	if err != nil || string(e.Details) != "{}" {
		t.Fatalf("empty details: %s %v", e.Details, err)
	}
	if rep := mustVerify(t, l.Path()); !rep.OK || rep.Entries != 1 {
		t.Fatalf("rejected appends must not touch the log: %s", rep)
	}
}
