package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExpandVars(t *testing.T) {
	t.Setenv("A", "/x")
	t.Setenv("B_2", "y[1]")
	t.Setenv("EMPTY", "")
	tests := []struct {
		in, want, err string
	}{
		{"$A/**", "/x/**", ""},
		{"${A}/**", "/x/**", ""},
		{"${A}z/$B_2", `/xz/y\[1\]`, ""},
		{`/a/\$A`, `/a/\$A`, ""},
		{"/no/vars", "/no/vars", ""},
		{"$UNSET_SCRIM_TEST/x", "", "$UNSET_SCRIM_TEST is not set"},
		{"$EMPTY/**", "", "$EMPTY is empty"},
		{"/a/$", "", "write \\$ for a literal $"},
		{"/a/${A", "", "write \\$ for a literal $"},
		{"/a/$1", "", "write \\$ for a literal $"},
		{"/a/${}", "", "write \\$ for a literal $"},
	}
	for _, tc := range tests {
		got, err := expandVars(tc.in, os.LookupEnv)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("expandVars(%q) = %q, %v; want error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("expandVars(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestSplitLiteral(t *testing.T) {
	tests := []struct{ glob, prefix, rest string }{
		{"/home/u/src/**/*.go", "/home/u/src", "**/*.go"},
		{"/home/u/.netrc", "/home/u/.netrc", ""},
		{"/**", "/", "**"},
		{`/a/\[b\]/c*`, "/a/[b]", "c*"},
		{`/a/\*/x`, "/a/*/x", ""},
		{"/a/{b,c}/d", "/a", "{b,c}/d"},
		{"/a/b]/c", "/a", "b]/c"}, // ']' alone is literal to doublestar; stopping early is only slower
	}
	for _, tc := range tests {
		p, r := splitLiteral(tc.glob)
		if p != tc.prefix || r != tc.rest {
			t.Errorf("splitLiteral(%q) = %q, %q; want %q, %q", tc.glob, p, r, tc.prefix, tc.rest)
		}
	}
}

func TestLiteralSuffix(t *testing.T) {
	for glob, want := range map[string]string{
		"**/*.pem":   ".pem",
		"**/.env":    "/.env",
		"**/.env.*":  "",
		"/a/dir/**":  "",
		"/a/b/c":     "",
		`/a/\*x`:     "x",
		"/a/*/x.go":  "/x.go",
		"/a/{b,c}":   "",
		"/a/[ab]cde": "cde",
	} {
		if got := literalSuffix(glob); got != want {
			t.Errorf("literalSuffix(%q) = %q, want %q", glob, got, want)
		}
	}
}

func TestNeedle(t *testing.T) {
	for glob, want := range map[string]string{
		"**/secrets/**":  "secrets",
		"**/.env.*":      ".env.",
		"**/id_rsa*":     "id_rsa",
		"**/*.pem":       ".pem",
		"/a/dir/**":      "a/dir",
		"/a/**/b/c":      "b/c",
		"/x/[ab]/longer": "",
		"/{long,alts}/x": "",
		`/a/\*very-long`: "very-long",
		"**/x":           "",
		"/**":            "",
	} {
		if got := needle(glob); got != want {
			t.Errorf("needle(%q) = %q, want %q", glob, got, want)
		}
	}
}

// TestFastRejectIsExact: the prefix and suffix checks only skip work; every
// pattern must answer exactly as doublestar does on its own.
func TestFastRejectIsExact(t *testing.T) {
	root := tempRoot(t)
	build(t, root, "real/", "link -> real")
	patterns := []string{"**/*.pem", "**/.env", "**/.env.*", root + "/link/**", root + "/link/*/x.go", root + "/a/[ab]cde",
		"**/secrets/**", root + `/q/\*x`, "/a/**/secrets/**/k*y", "**/.ssh/**", "/a/{secrets,b}/**", "/a/*/.env.*",
		"/a/b/**", `/a/\*b/**`, "/a/b/**/**", "/**", "/a/b/", `/a/]x/**`}
	paths := []string{"/x.pem", "/a/b.pem", "/a/.pem", "/.env", "/a/.env", "/a/.env.local", "/a/.envx",
		root + "/link", root + "/link/a/x.go", root + "/real/a/x.go", root + "/real", root + "/a/acde", root + "/a/ccde",
		"/secrets", "/a/secrets/b", root + "/q/*x", root + "/q/ax", "/a/secrets/key", "/a/b/secrets/c/kxy", "/a/secrets",
		"/.ssh", "/h/.ssh", "/h/.ssh/id", "/h/.sshx/id", "/a/b", "/a/b/.env.x", "/a/.env.x",
		"/a/b/", "/a/bc", "/a/b/c", "/a", "/", "/a/*b", "/a/*b/c", "/a/xb/c", "/a/]x/y", "/a/b/c/d"}
	for _, raw := range patterns {
		pat, err := compilePattern(raw, "", os.LookupEnv)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range paths {
			want := false
			for _, g := range pat.Expanded() {
				if ok, _ := doublestarMatch(g, path); ok {
					want = true
				}
			}
			if got := pat.match(path); got != want {
				t.Errorf("pattern %q path %q: match %v, doublestar %v", raw, path, got, want)
			}
		}
	}
	// The symlinked prefix really added a second form.
	pat, _ := compilePattern(root+"/link/**", "", os.LookupEnv)
	if f := pat.Expanded(); len(f) != 2 || f[1] != filepath.Join(root, "real")+"/**" {
		t.Fatalf("forms %q", f)
	}
}

func TestCompilePatternErrors(t *testing.T) {
	for raw, want := range map[string]string{
		"":           "empty pattern",
		"  ":         "empty pattern",
		"~bob/x":     "~user is not supported",
		"rel/**":     "relative pattern",
		"/a/[":       "invalid glob",
		"**/{a,b":    "invalid glob",
		"/a/\\":      "invalid glob",
		"$NOPE_X/**": "not set",
	} {
		if _, err := compilePattern(raw, "", os.LookupEnv); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("compilePattern(%q): %v, want %q", raw, err, want)
		}
	}
}
