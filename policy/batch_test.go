package policy

import (
	"os"
	"path/filepath"
	"testing"
)

// A batch must give exactly Decide's answers: same verdict, canonical form
// and deciding pattern, whatever symlinks the paths run through.
func TestBatchAgreesWithDecide(t *testing.T) {
	root := t.TempDir()
	mk := func(rel string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, rel string) {
		if err := os.Symlink(target, filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
	mk("ws/src/a.go")
	mk("ws/secrets/k")
	mk("ws/.env")
	link(filepath.Join(root, "ws/secrets"), "ws/src/sec")   // folder link into denied
	link(filepath.Join(root, "ws/secrets/k"), "ws/src/key") // file link into denied
	link(filepath.Join(root, "ws/src"), "ws/alias")         // folder link to allowed
	link("loop2", "ws/loop1")                               // a loop
	link("loop1", "ws/loop2")
	policyText := "default_tier = \"limited\"\n[tiers.limited]\nlabel = \"limited\"\nread = [\"" + root + "/ws/**\"]\ndeny = [\"**/secrets/**\", \"**/.env\"]\n"
	p, err := Parse([]byte(policyText), filepath.Join(root, "p.toml"))
	if err != nil {
		t.Fatal(err)
	}
	tier := p.Tiers["limited"]
	b := p.NewBatch(tier)
	paths := []string{
		"ws/src/a.go", "ws/secrets/k", "ws/.env", "ws/src/sec/k", "ws/src/key", "ws/alias/a.go",
		"ws/alias/sec/k", "ws/alias/missing/x", "ws/src/sec/missing", "ws/loop1", "ws/loop1/x",
		"ws/src/a.go/x", "ws/./src//a.go", "ws/alias/../secrets/k", "outside/x", "ws",
	}
	for _, rel := range paths {
		path := root + "/" + rel
		for round := 0; round < 2; round++ { // the second round hits the folder cache
			want, got := p.Decide(tier, path), b.Decide(path)
			if got.Allowed != want.Allowed || got.Canonical != want.Canonical || got.Pattern != want.Pattern || got.Path != want.Path {
				t.Errorf("%s (round %d): batch %+v, Decide %+v", rel, round, got, want)
			}
		}
	}
}
