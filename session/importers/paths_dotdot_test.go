package importers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/scrim-dev/scrim/policy"
)

// TestCanonicalDotDotIsPhysical: a transcript's "link/../x" names the
// sibling of the link's target, which is what the agent read. A lexical
// clean attributed a secret read as "public/into-secrets/../key" to
// public/key, where a limited model may read.
func TestCanonicalDotDotIsPhysical(t *testing.T) {
	root, err := policy.Canonical(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"public", "secrets/sub"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../secrets/sub", filepath.Join(root, "public/into")); err != nil {
		t.Fatal(err)
	}
	p := NewPaths()
	want := filepath.Join(root, "secrets/key")
	for _, c := range []struct{ path, cwd string }{
		{"public/into/../key", root},
		{"into/../key", root + "/public"},
		{root + "/public/into/../key", "/elsewhere"},
	} {
		if got := p.Canonical(c.path, c.cwd); got != want {
			t.Errorf("Canonical(%q, %q) = %q, want %q", c.path, c.cwd, got, want)
		}
	}
}
