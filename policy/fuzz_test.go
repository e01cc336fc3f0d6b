package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/assets"
)

// FuzzCanonical: on a real tree with symlinks and loops, Canonical never
// panics or hangs, and either fails or returns an absolute, clean path that is
// its own canonical form.
func FuzzCanonical(f *testing.F) {
	root, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range []string{"a/b/", "a/b/file"} {
		p := filepath.Join(root, e)
		if strings.HasSuffix(e, "/") {
			err = os.MkdirAll(p, 0o755)
		} else {
			err = os.WriteFile(p, nil, 0o644)
		}
		if err != nil {
			f.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"a/link": "b", "a/up": "..", "a/abs": filepath.Join(root, "a/b"), "a/dangling": "gone/x",
		"a/filelink": "b/file", "loop1": "loop2", "loop2": "loop1", "self": "self", "a/b/deep": "../../a/link/../up",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			f.Fatal(err)
		}
	}
	for _, s := range []string{"a/link/file", "a/up/a/up/a/link/..", "loop1/x", "self", "a/dangling/more/../../b",
		"a/b/file/x/..", "a/missing/../link/file", "a/b/deep/deep/x", "/", "", ".", "..", "//a//./b/", "a\x00b", "../../../.."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, path := range []string{in, root + "/" + in} {
			got, err := Canonical(path)
			if err != nil {
				if got != "" {
					t.Fatalf("Canonical(%q) returned %q with error %v", path, got, err)
				}
				continue
			}
			if !filepath.IsAbs(got) || filepath.Clean(got) != got {
				t.Fatalf("Canonical(%q) = %q: not absolute and clean", path, got)
			}
			if abs, err := absolute(path); err == nil {
				if k, ok := kernelResolve(abs); ok {
					links := 0
					if w, err := resolve(abs, &links); err != nil || w != k {
						t.Fatalf("%q: the kernel says %q, the walk says %q, %v", path, k, w, err)
					}
				}
			}
			again, err := Canonical(got)
			if err != nil && !errors.Is(err, ErrLoop) || err == nil && again != got {
				t.Fatalf("Canonical(Canonical(%q)) = %q, %v; want %q", path, again, err, got)
			}
		}
	})
}

// FuzzParse: the loader never panics, and either fails with a located error
// or gives a policy whose tiers all have labels and whose rules all resolve.
func FuzzParse(f *testing.F) {
	f.Add(assets.DefaultPolicy)
	f.Add([]byte(treePolicy))
	f.Add([]byte("default_tier = \"a\"\n[tiers]\na = { label = \"x\", read = [\"/**\"] }\nmodels = [{ match = \"m/**\", tier = \"a\" }]\n"))
	f.Add([]byte("default_tier = \"a\"\ntiers.a.label = \"x\"\n[tiers.a]\n"))
	f.Add([]byte("[tiers.a]\nlabel = ''\ndney = [\"/[\"]\n[[models]]\nteir = 1\n"))
	f.Setenv("PROJ", "/proj")
	const file = "/fuzz/policy.toml"
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data, file)
		if err != nil {
			var le *LoadError
			if p != nil || !errors.As(err, &le) || le.File != file || le.Line < 1 || le.Msg == "" {
				t.Fatalf("bad failure: policy %v, error %#v", p, err)
			}
			for _, m := range le.More {
				if m.Line < le.Line {
					t.Fatalf("problems out of line order: %d before %d", le.Line, m.Line)
				}
			}
			return
		}
		if len(p.Tiers) == 0 || len(p.Order) != len(p.Tiers) || p.Tiers[p.DefaultTier] == nil {
			t.Fatalf("policy without a usable default tier: %+v", p)
		}
		for name, tier := range p.Tiers {
			if tier == nil || tier.Name != name || strings.TrimSpace(tier.Label) == "" {
				t.Fatalf("tier %q has no label: %+v", name, tier)
			}
		}
		for _, r := range p.Models {
			if p.Tiers[r.Tier] == nil || r.Line < 1 {
				t.Fatalf("rule %+v names no tier", r)
			}
		}
	})
}

// FuzzIsClean holds batchSplit's shortcut to filepath.Clean: a path it takes
// as clean must be one that Clean leaves as it is, and the other way round,
// and the split must be Clean's.
func FuzzIsClean(f *testing.F) {
	for _, s := range []string{"/", "/a", "/a/b", "//a", "/a/", "/a/./b", "/a/../b", "/.", "/..", "/a/.b", "/a/..b", "/a//b", "/...", "/a/b/."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		if !strings.HasPrefix(path, "/") || strings.IndexByte(path, 0) >= 0 {
			return
		}
		if got, want := isClean(path), filepath.Clean(path) == path; got != want {
			t.Fatalf("isClean(%q) = %v, Clean gives %q", path, got, filepath.Clean(path))
		}
		lex, dir, name, ok := batchSplit(path)
		if !ok {
			return
		}
		want := filepath.Clean(path)
		if lex != want || dir != filepath.Clean(filepath.Dir(want)) || name != filepath.Base(want) {
			t.Fatalf("batchSplit(%q) = %q, %q, %q; Clean gives %q", path, lex, dir, name, want)
		}
	})
}
