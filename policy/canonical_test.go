package policy

import (
	"errors"
	"path/filepath"
	"runtime"
	"testing"
)

func TestCanonical(t *testing.T) {
	root := tempRoot(t)
	build(t, root,
		"a/b/file",
		"a/link -> b",
		"a/abs -> "+filepath.Join(root, "a/b"),
		"a/up -> ../a/b/../b",
		"a/chain1 -> chain2",
		"a/chain2 -> link",
		"a/filelink -> b/file",
		"a/dangling -> nowhere/x",
		"deep/x/y/",
		"a/tox -> ../deep/x/y",
		"loop/p -> q",
		"loop/q -> p",
		"loop/self -> self",
	)
	r := func(s string) string { return root + "/" + s }
	tests := []struct {
		in, want string
	}{
		{r("a/b/file"), r("a/b/file")},
		{r("a/link/file"), r("a/b/file")},
		{r("a/abs/file"), r("a/b/file")},
		{r("a/up/file"), r("a/b/file")},
		{r("a/chain1/file"), r("a/b/file")},
		{r("a/filelink"), r("a/b/file")},
		{r("a//./b/./file/"), r("a/b/file")},
		{r("a/b/../b/file"), r("a/b/file")},
		// ".." after a symlink is the target's parent (physical), not the link's.
		{r("a/tox/../z"), r("deep/x/z")},
		{r("a/tox/.."), r("deep/x")},
		// Missing paths: the longest existing prefix is resolved.
		{r("a/link/new/deeper"), r("a/b/new/deeper")},
		{r("a/link/new/../file"), r("a/b/file")},
		{r("a/missing/../link/file"), r("a/b/file")},
		{r("a/dangling"), r("a/nowhere/x")},
		{r("a/dangling/more"), r("a/nowhere/x/more")},
		// A file used as a folder cannot exist: appended lexically.
		{r("a/b/file/under"), r("a/b/file/under")},
		{"/", "/"},
		{"/..", "/"},
		{"/../../" + root[1:] + "/a/link", r("a/b")},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Canonical(tc.in)
			if err != nil || got != tc.want {
				t.Fatalf("Canonical(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
	t.Run("relative to the working folder", func(t *testing.T) {
		t.Chdir(r("a"))
		got, err := Canonical("link/../link/file")
		if err != nil || got != r("a/b/file") {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	for _, bad := range []string{r("loop/p"), r("loop/p/x"), r("loop/self"), r("loop/q/../x")} {
		t.Run("loop "+bad, func(t *testing.T) {
			got, err := Canonical(bad)
			if !errors.Is(err, ErrLoop) || got != "" {
				t.Fatalf("Canonical(%q) = %q, %v; want ErrLoop", bad, got, err)
			}
		})
	}
	for _, bad := range []string{"", "/a\x00b"} {
		if got, err := Canonical(bad); err == nil {
			t.Errorf("Canonical(%q) = %q, want an error", bad, got)
		}
	}
}

// TestKernelResolveAgreesWithTheWalk: the fast path must give exactly what
// the component walk gives, wherever it answers at all.
func TestKernelResolveAgreesWithTheWalk(t *testing.T) {
	root := tempRoot(t)
	build(t, root, "a/b/file", "a/link -> b", "a/up -> ../a/b/../b", "a/tox -> ../deep/x/y", "deep/x/y/",
		"a/abs -> "+filepath.Join(root, "a/b"), "a/dangling -> nowhere", "[odd] *name{x}/f", "sp ace/f")
	answered := 0
	for _, rel := range []string{"a/b/file", "a/link/file", "a/up/file", "a/tox/..", "a/tox/../y/./", "a/abs/../link",
		"a/dangling", "a/b/file/x", "a/missing/../link", "[odd] *name{x}/f", "sp ace/f", ".", "a//b//"} {
		abs := root + "/" + rel
		links := 0
		walk, werr := resolve(abs, &links)
		k, ok := kernelResolve(abs)
		if !ok {
			continue
		}
		answered++
		if werr != nil || k != walk {
			t.Errorf("%s: kernel %q, walk %q (%v)", rel, k, walk, werr)
		}
	}
	if runtime.GOOS == "linux" && answered < 9 {
		t.Errorf("the kernel answered only %d paths; is /proc mounted?", answered)
	}
}
