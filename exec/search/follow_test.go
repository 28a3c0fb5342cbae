package search

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// TestFollowReaderReadsUntilTheWriterExits: output written in bursts,
// with pauses in between, is read whole and in order; EOF comes only once
// the writer has exited; read output is freed from the in-memory file.
func TestFollowReaderReadsUntilTheWriterExits(t *testing.T) {
	out, err := newOutputFile()
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	// 6 MB of "x", a pause longer than the poll, then the rest.
	cmd := exec.Command("sh", "-c", `head -c 6000000 /dev/zero | tr '\0' x; sleep 0.05; printf 'end\n'; sleep 0.05; printf 'last'`)
	cmd.Stdout = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	r := &followReader{f: out, done: exited}
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	default:
		t.Fatal("EOF before the writer exited")
	}
	want := append(bytes.Repeat([]byte("x"), 6000000), "end\nlast"...)
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, want %d (tail %q)", len(got), len(want), got[max(0, len(got)-10):])
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(out.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if st.Size != int64(len(want)) || st.Blocks*512 > 3<<20 {
		t.Errorf("file size %d, %d bytes still held: read output was not freed", st.Size, st.Blocks*512)
	}
	if r.punched < followPunch {
		t.Errorf("punched %d bytes", r.punched)
	}
}

// Without memfd_create, backend output goes through a pipe: both paths and
// both backends answer exactly as with the in-memory file.
func TestSearchWithoutMemfdUsesAPipe(t *testing.T) {
	root := walkCorpus(t)
	reqs := []string{`{"pattern":"needle"}`, `{"pattern":"needle","context":1,"max_results":5}`}
	want := map[string]string{}
	for _, be := range backends(t) {
		for _, req := range reqs {
			want[be+req] = responseSummary(search(t, be, root, req))
		}
	}
	saved := newOutputFile
	defer func() { newOutputFile = saved }()
	calls := 0
	newOutputFile = func() (*os.File, error) {
		calls++
		return nil, errors.New("memfd_create: operation not permitted")
	}
	for _, be := range backends(t) {
		for _, req := range reqs {
			if got := responseSummary(search(t, be, root, req)); got != want[be+req] {
				t.Errorf("%s %s through a pipe:\n%s\nwant\n%s", be, req, got, want[be+req])
			}
		}
	}
	if calls == 0 {
		t.Fatal("no backend output was started")
	}
}
