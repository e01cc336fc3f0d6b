package policy

import (
	"github.com/bmatcuk/doublestar/v4"
	"os"
	"path/filepath"
	"testing"
)

// tempRoot is a fresh temp folder given by its canonical path, so that
// expected paths in tests are exact even where /tmp is itself a symlink.
func tempRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// build makes files (names ending without "/"), folders (ending in "/") and
// symlinks ("link -> target") under root.
func build(t testing.TB, root string, entries ...string) {
	t.Helper()
	for _, e := range entries {
		if link, target, ok := cutArrow(e); ok {
			p := filepath.Join(root, link)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		p := filepath.Join(root, e)
		if e[len(e)-1] == '/' {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("content of "+e+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func cutArrow(s string) (string, string, bool) {
	for i := 0; i+4 <= len(s); i++ {
		if s[i:i+4] == " -> " {
			return s[:i], s[i+4:], true
		}
	}
	return "", "", false
}

// writePolicy writes text to dir/policy.toml and loads it.
func writePolicy(t *testing.T, dir, text string) *Policy {
	t.Helper()
	path := filepath.Join(dir, "policy.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path)
	if err != nil {
		t.Fatalf("load policy: %v", err)
	}
	return p
}

var doublestarMatch = doublestar.Match
