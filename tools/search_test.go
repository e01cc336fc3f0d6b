package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestGrepAttributesEachFileItsOwnLines(t *testing.T) {
	root := tempTree(t, map[string]string{
		"a.txt": "alpha needle one\nnothing\nneedle two\n",
		"b.txt": "no match here\n",
		"c.txt": "c needle\n",
	})
	r := runTool(t, "grep", envFor(t, "trusted/m", root), map[string]any{"pattern": "needle"})
	m := r.Message
	a, c := filepath.Join(root, "a.txt"), filepath.Join(root, "c.txt")
	if !slices.Equal(m.Meta.SourcePaths, []string{a, c}) {
		t.Fatalf("sourcePaths %q, want [%s %s]", m.Meta.SourcePaths, a, c)
	}
	if len(m.Parts) != 2 {
		t.Fatalf("want one part per matching file, got %d: %q", len(m.Parts), m.Text())
	}
	want := map[string]string{
		a: a + ":1:alpha needle one\n" + a + ":3:needle two",
		c: c + ":1:c needle",
	}
	for _, p := range m.Parts {
		if p.Text != want[p.SourcePath] {
			t.Errorf("part from %s: %q, want %q", p.SourcePath, p.Text, want[p.SourcePath])
		}
	}
}

func TestGrepSkipsGitIgnoredAndBinaryFiles(t *testing.T) {
	root := tempTree(t, map[string]string{
		".git/HEAD":              "needle in git",
		".gitignore":             "*.log\nbuild/\n!keep.log\n",
		"app.log":                "needle in a log",
		"keep.log":               "needle kept by negation",
		"build/out.txt":          "needle in build",
		"src/main.go":            "needle in source",
		"src/.gitignore":         "gen.go\n",
		"src/gen.go":             "needle generated",
		"src/deep/gen.go":        "needle generated deeper",
		"img.bin":                "needle\x00binary",
		"vendor/x/.gitignore":    "/only-here.txt\n",
		"vendor/x/only-here.txt": "needle anchored",
		"vendor/only-here.txt":   "needle not anchored here",
	})
	r := runTool(t, "grep", envFor(t, "trusted/m", root), map[string]any{"pattern": "needle"})
	got := r.Message.Meta.SourcePaths
	want := []string{
		filepath.Join(root, "keep.log"),
		filepath.Join(root, "src", "main.go"),
		filepath.Join(root, "vendor", "only-here.txt"),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("searched %q,\nwant %q", got, want)
	}
	if !strings.Contains(r.Message.Text(), "[skipped 1 binary file]") {
		t.Fatalf("no note about the binary file: %q", r.Message.Text())
	}

	t.Run("ignore rules above the search folder apply", func(t *testing.T) {
		r := runTool(t, "grep", envFor(t, "trusted/m", root), map[string]any{"pattern": "needle", "path": "src"})
		if got := r.Message.Meta.SourcePaths; !slices.Equal(got, []string{filepath.Join(root, "src", "main.go")}) {
			t.Fatalf("searched %q", got)
		}
	})
}

func TestGrepOptionsAndLimits(t *testing.T) {
	var many strings.Builder
	for i := range 10 {
		fmt.Fprintf(&many, "hit %d\n", i)
	}
	root := tempTree(t, map[string]string{
		"many.txt":  many.String(),
		"Case.go":   "HIT upper\n",
		"sub/x.go":  "hit in go\n",
		"sub/y.txt": "hit in txt\n",
	})
	env := envFor(t, "trusted/m", root)
	for _, tc := range []struct {
		name  string
		in    map[string]any
		paths []string
		text  string
	}{
		{"ignore_case", map[string]any{"pattern": "hit upper", "ignore_case": true}, []string{filepath.Join(root, "Case.go")}, ":1:HIT upper"},
		{"glob on names", map[string]any{"pattern": "hit", "glob": "*.go"}, []string{filepath.Join(root, "sub", "x.go")}, "hit in go"},
		{"glob on paths", map[string]any{"pattern": "hit", "glob": "sub/*.txt"}, []string{filepath.Join(root, "sub", "y.txt")}, "hit in txt"},
		{"a single file", map[string]any{"pattern": "in", "path": "sub/y.txt"}, []string{filepath.Join(root, "sub", "y.txt")}, "y.txt:1:hit in txt"},
		{"max_matches", map[string]any{"pattern": "^hit \\d", "max_matches": 3}, []string{filepath.Join(root, "many.txt")}, "[stopped after 3 matches"},
		{"no match", map[string]any{"pattern": "zebra"}, nil, `No matches for "zebra" in ` + root},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runTool(t, "grep", env, tc.in)
			if r.Message.IsError {
				t.Fatalf("error: %s", r.Message.Text())
			}
			if !slices.Equal(r.Message.Meta.SourcePaths, tc.paths) {
				t.Fatalf("sourcePaths %q, want %q", r.Message.Meta.SourcePaths, tc.paths)
			}
			if !strings.Contains(r.Message.Text(), tc.text) {
				t.Fatalf("text %q does not contain %q", r.Message.Text(), tc.text)
			}
		})
	}
	t.Run("max_matches stops exactly", func(t *testing.T) {
		m := runTool(t, "grep", env, map[string]any{"pattern": "^hit \\d", "max_matches": 3}).Message
		if n := strings.Count(m.Parts[0].Text, "\n") + 1; n != 3 {
			t.Fatalf("%d lines, want 3: %q", n, m.Parts[0].Text)
		}
	})
	for _, bad := range []map[string]any{{"pattern": "(unclosed"}, {"pattern": "x", "glob": "[bad"}, {}} {
		if r := runTool(t, "grep", env, bad); !r.Message.IsError || !strings.HasPrefix(r.Message.Text(), "grep failed: ") {
			t.Errorf("%v: want an error result, got %q", bad, r.Message.Text())
		}
	}
}

func TestGlobNamesCarryNoSourcePathsContentDoes(t *testing.T) {
	root := tempTree(t, map[string]string{
		"b.go":       "package b\n",
		"a.go":       "package a\n",
		"sub/c.go":   "package c\n",
		"sub/d.txt":  "not go\n",
		"a-b/e.go":   "package e\n",
		".git/x.go":  "package git\n",
		"linked.go":  "->sub/c.go",
		"ignored.go": "package ignored\n",
		".gitignore": "ignored.go\n",
	})
	env := envFor(t, "trusted/m", root)
	names := []string{
		filepath.Join(root, "a-b", "e.go"), filepath.Join(root, "a.go"), filepath.Join(root, "b.go"),
		filepath.Join(root, "linked.go"), filepath.Join(root, "sub", "c.go"),
	}
	t.Run("names only", func(t *testing.T) {
		m := runTool(t, "glob", env, map[string]any{"pattern": "**/*.go"}).Message
		if m.Meta.SourcePaths != nil {
			t.Fatalf("names-only glob carries sourcePaths %q", m.Meta.SourcePaths)
		}
		if got := strings.Split(m.Text(), "\n"); !slices.Equal(got, names) {
			t.Fatalf("names %q,\nwant %q", got, names)
		}
	})
	t.Run("with content", func(t *testing.T) {
		m := runTool(t, "glob", env, map[string]any{"pattern": "**/*.go", "content": true}).Message
		c := filepath.Join(root, "sub", "c.go")
		wantPaths := []string{filepath.Join(root, "a-b", "e.go"), filepath.Join(root, "a.go"), filepath.Join(root, "b.go"), c}
		if !slices.Equal(m.Meta.SourcePaths, wantPaths) {
			t.Fatalf("sourcePaths %q,\nwant %q", m.Meta.SourcePaths, wantPaths)
		}
		if len(m.Parts) != 5 {
			t.Fatalf("want a part per matched file, got %d", len(m.Parts))
		}
		for _, p := range m.Parts {
			pkg := strings.TrimSuffix(filepath.Base(p.SourcePath), ".go")
			if want := "==> " + p.SourcePath + " <==\n     1\tpackage " + pkg + "\n"; p.Text != want {
				t.Errorf("part %q, want %q", p.Text, want)
			}
		}
	})
	t.Run("pattern under a folder", func(t *testing.T) {
		m := runTool(t, "glob", env, map[string]any{"pattern": "*.txt", "path": "sub"}).Message
		if m.Text() != filepath.Join(root, "sub", "d.txt") {
			t.Fatalf("got %q", m.Text())
		}
	})
	t.Run("nothing matches", func(t *testing.T) {
		m := runTool(t, "glob", env, map[string]any{"pattern": "nope/**/*.rs"}).Message
		if m.IsError || !strings.HasPrefix(m.Text(), `No files match "nope/**/*.rs"`) || m.Meta.SourcePaths != nil {
			t.Fatalf("got %q (error %v)", m.Text(), m.IsError)
		}
	})
}

// A file reached through a link below the root is named as walked and as
// what it is: two copies of one line tell which name is the link.
func TestGrepNamesTheLinkAFileWasReachedThrough(t *testing.T) {
	root := tempTree(t, map[string]string{"data/key.txt": "needle\n"})
	if err := os.MkdirAll(filepath.Join(root, "alias"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../data/key.txt", filepath.Join(root, "alias", "key.txt")); err != nil {
		t.Fatal(err)
	}
	r := runTool(t, "grep", envFor(t, "trusted/m", root), map[string]any{"pattern": "needle"})
	real := filepath.Join(root, "data", "key.txt")
	text := r.Message.Text()
	if !strings.Contains(text, filepath.Join(root, "alias", "key.txt")+" (→ "+real+"):1:needle") {
		t.Fatalf("the link's copy is not named as such:\n%s", text)
	}
	if !strings.Contains(text, "\n"+real+":1:needle") && !strings.HasPrefix(text, real+":1:needle") {
		t.Fatalf("the file's own line is not as before:\n%s", text)
	}
}
