package policy

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestDrivePath(t *testing.T) {
	for in, want := range map[string]string{
		`C:\Users\me\proj\.env`: "C:/Users/me/proj/.env",
		`c:\Users\me\..\x`:      "C:/Users/x",
		"d:/a//b/":              "D:/a/b",
		`C:\`:                   "C:/",
		"C:/":                   "C:/",
	} {
		if got, ok := DrivePath(in); !ok || got != want {
			t.Errorf("DrivePath(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"/etc/passwd", "C:", "1:/x", "relative/C:/x", "", `\\server\share`} {
		if got, ok := DrivePath(in); ok {
			t.Errorf("DrivePath(%q) = %q, want not a drive path", in, got)
		}
	}
}

// Windows paths recorded from a transcript are decided by the same
// patterns, never looked up on this machine's disk.
func TestWindowsPathsAreDecided(t *testing.T) {
	p, err := Parse([]byte(`
default_tier = "cloud"
[tiers.cloud]
label = "cloud"
read  = ["C:/Users/me/proj/**", "d:/work/**"]
deny  = ["**/.env", "**/secrets/**"]
[tiers.local]
label = "local"
read  = ["/**", "?:/**"]
[[models]]
match = "local/*"
tier = "local"
`), filepath.Join(t.TempDir(), "p.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		model, path string
		allowed     bool
	}{
		{"x", `C:\Users\me\proj\main.go`, true},
		{"x", "C:/Users/me/proj/.env", false},
		{"x", `C:\Users\me\proj\secrets\key`, false},
		{"x", `C:\Users\other\x`, false},
		{"x", "D:/work/a.txt", true},
		{"local/m", "E:/anything", true},
		{"local/m", "/etc/hosts", true},
	} {
		if got := p.Allowed(c.model, c.path); got != c.allowed {
			t.Errorf("%s %s: allowed %v, want %v", c.model, c.path, got, c.allowed)
		}
	}
}

// Forms gives both readings of ".." after a symlink, and one form when they
// agree.
func TestForms(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "secrets"), 0o755))
	must(os.MkdirAll(filepath.Join(root, "src"), 0o755))
	must(os.Symlink("../src", filepath.Join(root, "secrets", "sub")))
	got := Forms(root + "/secrets/sub/../x.txt")
	if want := []string{root + "/x.txt", root + "/secrets/x.txt"}; !slices.Equal(got, want) {
		t.Fatalf("Forms = %q, want %q", got, want)
	}
	if got := Forms(root + "/src/../x.txt"); !slices.Equal(got, []string{root + "/x.txt"}) {
		t.Fatalf("Forms without a link = %q", got)
	}
}
