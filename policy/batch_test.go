package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// A batch lists a folder once enough of its names are asked about, instead
// of checking each name: a symlink, a missing name or a name in another case
// asked after that must still get Decide's answer.
func TestBatchListingAgreesWithDecide(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	for _, dir := range []string{"ws/many", "ws/secrets", "ws/big"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(rel string) {
		if err := os.WriteFile(filepath.Join(root, rel), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ws/secrets/k")
	var paths []string
	for i := range 12 {
		name := fmt.Sprintf("ws/many/f%02d.go", i)
		write(name)
		paths = append(paths, filepath.Join(root, name))
	}
	// A folder bigger than a listing's budget: names past it are checked one
	// by one.
	for i := range 1100 {
		write(fmt.Sprintf("ws/big/g%04d", i))
	}
	for i := 1090; i < 1100; i++ {
		paths = append(paths, filepath.Join(ws, "big", fmt.Sprintf("g%04d", i)))
	}
	for _, l := range [][2]string{
		{filepath.Join(ws, "secrets/k"), "ws/many/key.go"}, // file link into denied
		{filepath.Join(ws, "secrets"), "ws/many/sub"},      // folder link into denied
		{filepath.Join(ws, "secrets/k"), "ws/big/g1995x"},  // link past the budget
		{"nowhere", "ws/many/dangling"},                    // dangling link
	} {
		if err := os.Symlink(l[0], filepath.Join(root, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	paths = append(paths,
		filepath.Join(ws, "many/key.go"), filepath.Join(ws, "many/sub/k"), filepath.Join(ws, "big/g1095x"),
		filepath.Join(ws, "many/dangling"), filepath.Join(ws, "many/missing.go"), filepath.Join(ws, "many/F01.go"),
		filepath.Join(ws, "many/sub"))
	p, err := Parse([]byte("default_tier = \"limited\"\n[tiers.limited]\nlabel = \"limited\"\nread = [\""+ws+"/**\"]\ndeny = [\"**/secrets/**\"]\n"), filepath.Join(root, "p.toml"))
	if err != nil {
		t.Fatal(err)
	}
	tier := p.Tiers["limited"]
	// Told what is coming, a batch lists a folder at its first name: the
	// links are then asked first, so that they meet the listing.
	for _, expect := range []bool{false, true} {
		b := p.NewBatch(tier)
		order := paths
		if expect {
			order = slices.Clone(paths)
			slices.Reverse(order)
			b.Expect(order)
		}
		denied := 0
		for i, path := range order {
			want, got := p.Decide(tier, path), b.Decide(path)
			if got.Allowed != want.Allowed || got.Canonical != want.Canonical || got.Pattern != want.Pattern {
				t.Errorf("expect %v: %s: batch %+v, Decide %+v", expect, path, got, want)
			}
			if !got.Allowed {
				denied++
			}
			if i == 0 && expect && len(b.dirs[filepath.Dir(path)].plain) == 0 {
				t.Errorf("expect %v: folder of %s not listed at its first name", expect, path)
			}
		}
		for _, dir := range []string{"many", "big"} {
			if f := b.dirs[filepath.Join(ws, dir)]; f == nil || len(f.plain) == 0 {
				t.Errorf("expect %v: folder %s was not listed", expect, dir)
			}
		}
		if denied < 3 {
			t.Errorf("expect %v: only %d paths denied: the links into secrets/ were not followed", expect, denied)
		}
	}
}

// A batch is safe for concurrent use: passes that share one (the pieces of
// a gathering prepared on every core, the steps of a count) tell it what is
// coming while others are deciding (run with -race).
func TestBatchExpectWhileDeciding(t *testing.T) {
	root := t.TempDir()
	var paths []string
	for i := range 40 {
		p := filepath.Join(root, fmt.Sprintf("d%d", i%4), fmt.Sprintf("f%d", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	p, err := Parse([]byte("default_tier = \"t\"\n[tiers.t]\nlabel = \"t\"\nread = [\""+root+"/**\"]\ndeny = [\"**/d3/**\"]\n"), filepath.Join(root, "p.toml"))
	if err != nil {
		t.Fatal(err)
	}
	tier := p.Tiers["t"]
	b := p.NewBatch(tier)
	done := make(chan bool)
	for g := range 4 {
		go func() {
			ok := true
			for round := range 20 {
				b.Expect(paths[(g+round)%len(paths):])
				for _, path := range paths {
					ok = ok && b.Decide(path).Allowed == p.Decide(tier, path).Allowed
				}
			}
			done <- ok
		}()
	}
	for range 4 {
		if !<-done {
			t.Error("a batch shared by goroutines decided a path otherwise than Decide")
		}
	}
}
