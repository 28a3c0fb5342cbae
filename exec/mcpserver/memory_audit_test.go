package mcpserver

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// Memory writes are audited, so a write the log cannot record is not made:
// with the audit log's end altered, add_memory and delete_memory are
// refused before they write (as decisions are), not "stored but not
// audited".
func TestMCPMemoryWritesRefusedOnDamagedLog(t *testing.T) {
	f := newFixture(t)
	cs := f.connect(t, "stdio")
	res, sc := call(t, cs, "add_memory", map[string]any{"text": "before the damage"})
	if res.IsError {
		t.Fatalf("add_memory: %s", text(res))
	}
	id := sc["id"].(float64)
	p := f.env.AuditPath()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.LastIndex(b[:len(b)-1], []byte("\n")) + 1
	last := bytes.Replace(b[i:], []byte(`"memory_added"`), []byte(`"memory_addex"`), 1)
	os.WriteFile(p, append(b[:i:i], last...), 0o600)

	st := f.deps.Memory
	before, _ := st.Count(context.Background())
	res, _ = call(t, cs, "add_memory", map[string]any{"text": "after the damage"})
	if !res.IsError || strings.Contains(text(res), "stored but not audited") {
		t.Errorf("add_memory on a damaged log: %s", text(res))
	}
	if n, _ := st.Count(context.Background()); n != before {
		t.Errorf("add_memory wrote with the log damaged: %d memories, was %d", n, before)
	}
	res, _ = call(t, cs, "delete_memory", map[string]any{"id": id})
	if !res.IsError || strings.Contains(text(res), "deleted but not audited") {
		t.Errorf("delete_memory on a damaged log: %s", text(res))
	}
	if _, err := st.Get(context.Background(), int64(id)); err != nil {
		t.Errorf("delete_memory deleted with the log damaged: %v", err)
	}
}
