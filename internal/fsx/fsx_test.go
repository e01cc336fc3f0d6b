package fsx

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// CopyNew copies the bytes with 0600, and never overwrites a file there.
func TestCopyNew(t *testing.T) {
	dir := t.TempDir()
	from, to := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(from, []byte("content\x00bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CopyNew(from, to); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(to)
	if err != nil || string(got) != "content\x00bytes" {
		t.Fatalf("copy holds %q (%v)", got, err)
	}
	if fi, err := os.Stat(to); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("copy mode %v (%v)", fi.Mode(), err)
	}
	if err := os.WriteFile(to, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CopyNew(from, to); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("copy over an existing file: %v", err)
	}
	if got, _ := os.ReadFile(to); string(got) != "mine" {
		t.Fatalf("an existing file was overwritten: %q", got)
	}
}

// CopyNewSparse copies data, holes and a tail of zeros byte for byte, at the
// file's size, and never overwrites a file there.
func TestCopyNewSparse(t *testing.T) {
	dir := t.TempDir()
	from, to := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	f, err := os.Create(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int64{0, 300 << 10, 1<<20 - 3} {
		if _, err := f.WriteAt([]byte("data"), at); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(4 << 20); err != nil { // a hole to the end
		t.Fatal(err)
	}
	f.Close()
	if err := CopyNewSparse(from, to); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(from)
	got, err := os.ReadFile(to)
	if err != nil || len(got) != 4<<20 || string(got) != string(want) {
		t.Fatalf("copy of %d bytes differs (%d bytes, %v)", len(want), len(got), err)
	}
	if err := CopyNewSparse(from, to); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("copy over an existing file: %v", err)
	}
}
