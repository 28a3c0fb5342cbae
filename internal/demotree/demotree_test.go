package demotree

import (
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func digest(t *testing.T, dir string) [32]byte {
	h := sha256.New()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		h.Write([]byte(rel))
		h.Write(b)
		return nil
	})
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

func TestWriteIsDeterministicAndSizable(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	n, err := Write(a)
	if err != nil {
		t.Fatal(err)
	}
	if n < 200 || n > 500 {
		t.Fatalf("wrote %d files, want a few hundred", n)
	}
	if _, err := Write(b); err != nil {
		t.Fatal(err)
	}
	if digest(t, a) != digest(t, b) {
		t.Fatal("two runs wrote different trees")
	}
}
