package shellread

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree makes a real workspace: files, a folder, a symlink into secrets/.
func tree(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"a.go": "package a\n", "b.go": "package b\n", "notes.md": "# notes\n",
		"src/x.go": "package x\n", "src/y.go": "package y\n", "secrets/key": "k\n", ".env": "A=1\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("secrets", filepath.Join(dir, "public")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../src", filepath.Join(dir, "secrets", "sub")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestOnDisk(t *testing.T) {
	ws := tree(t)
	rel := func(r Reading) string {
		return strings.ReplaceAll(describe(r), ws, "WS")
	}
	for _, c := range []struct{ cmd, out, want string }{
		{"cat *.go", "x\n", "files=[WS/a.go WS/b.go]"},
		{"cat src/*.go | head", "x\n", "files=[WS/src/x.go WS/src/y.go]"},
		{"cat *.rs", "", "unknown(the glob *.rs matches nothing on this machine) files=[]"},
		{"cat public/key", "k\n", "files=[WS/secrets/key]"},
		// ".." after a link: the kernel climbs from the link's target, a
		// path-cleaning program does not; both forms are kept.
		{"cat secrets/sub/../a.go", "package a\n", "files=[WS/a.go WS/secrets/a.go]"},
		{"find . -name '*.go' -exec cat {} +", "x\n", "files=[WS/a.go WS/b.go WS/src/x.go WS/src/y.go]"},
		{"find src -type f -exec head -n 5 {} \\;", "x\n", "files=[WS/src/x.go WS/src/y.go]"},
		{"find . -name key -exec cat {} \\;", "k\n", "files=[WS/secrets/key]"},
		{"find . -newer a.go -exec cat {} +", "k\n", "unknown(the find expression uses -newer, which scrim does not evaluate) files=[]"},
		{"find /nowhere/at/all -exec cat {} +", "", "unknown(find -exec runs cat on files that cannot be listed on this machine) files=[]"},
		{"find src -name '*.go' | xargs cat", "x\n", "files=[WS/src/x.go WS/src/y.go]"},
		{"rg -n package src", "src/x.go:1:package x\nsrc/y.go:1:package y\n", "files=[WS/src/x.go WS/src/y.go] parts=[WS/src/x.go:1 WS/src/y.go:1]"},
		{"rg -n package a.go", "1:package a\n", "files=[WS/a.go]"},
		{"grep -r package src", "src/x.go:package x\n", "files=[WS/src/x.go] parts=[WS/src/x.go:1]"},
		{"grep -r A .env", "A=1\n", "files=[WS/.env]"},
	} {
		r := Read(Command{Line: c.cmd, Dir: ws}, c.out, nil)
		if got := rel(r); got != c.want {
			t.Errorf("%s\n got  %s\n want %s", c.cmd, got, c.want)
		}
	}
}
