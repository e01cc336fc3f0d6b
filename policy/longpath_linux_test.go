package policy

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCanonicalBeyondPathMax: a short link to a folder whose real path is
// longer than PATH_MAX opens fine, but its path cannot be read back. It must
// be undecidable (an error, so denied), and it must not switch the kernel's
// fast path off for every later path, as if /proc were missing.
func TestCanonicalBeyondPathMax(t *testing.T) {
	root := tempRoot(t)
	fd, err := unix.Open(root, unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.Repeat("p", 20)
	rel := ""
	for len(root)+len(rel) < 4110 {
		if err := unix.Mkdirat(fd, name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, name, unix.O_DIRECTORY|unix.O_RDONLY, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd, rel = next, rel+name+"/"
	}
	unix.Close(fd)
	if len(rel) >= 4096 {
		t.Skipf("temp folder %s is too long for this test", root)
	}
	if err := os.Symlink(rel[:len(rel)-1], root+"/short"); err != nil {
		t.Fatal(err)
	}
	// A file that is there opens, and only reading its path back fails.
	if err := os.WriteFile(root+"/short/there", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{root + "/short/file", root + "/short/there"} {
		if got, err := Canonical(p); err == nil {
			t.Fatalf("Canonical of a path beyond PATH_MAX = %q, want an error", got[:80]+"…")
		}
		if noProcFD.Load() {
			t.Fatalf("%s turned the /proc fast path off for the whole process", p[len(root):])
		}
	}
}
