package importers

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFilesUnderALinkedRoot: a root that is a symbolic link to a folder
// is walked, its files named under the link (as the watcher names them); a
// link to a file is taken as named.
func TestFilesUnderALinkedRoot(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "disk", "projects")
	for _, f := range []string{"-home-dev-a/1.jsonl", "-home-dev-b/2.jsonl", "-home-dev-b/notes.txt"} {
		p := filepath.Join(real, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "projects")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	fileLink := filepath.Join(dir, "one.jsonl")
	if err := os.Symlink(filepath.Join(real, "-home-dev-a", "1.jsonl"), fileLink); err != nil {
		t.Fatal(err)
	}
	jsonl := func(name string) bool { return strings.HasSuffix(name, ".jsonl") }
	got, err := Files([]string{link, fileLink}, jsonl)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(link, "-home-dev-a", "1.jsonl"), filepath.Join(link, "-home-dev-b", "2.jsonl"), fileLink}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Files under a linked root:\n got  %q\n want %q", got, want)
	}
}

// A path that is not there is named once, with why.
func TestFilesMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone")
	_, err := Files([]string{missing}, func(string) bool { return true })
	if want := "cannot read " + missing + ": no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("Files of a missing path: %v, want %q", err, want)
	}
}
