package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReadRecordsCanonicalPath(t *testing.T) {
	root := tempTree(t, map[string]string{
		"real/file.txt": "hello\nworld\n",
		"dir/other.txt": "x",
	})
	if err := os.Symlink(filepath.Join(root, "real", "file.txt"), filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(root, "linkdir")); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(root, "real", "file.txt")
	for _, tc := range []struct{ name, path string }{
		{"absolute", want},
		{"relative to the working folder", "real/file.txt"},
		{"through a file symlink", filepath.Join(root, "link.txt")},
		{"through a folder symlink", "linkdir/file.txt"},
		{"dir/../file", filepath.Join(root, "dir", "..", "real", "file.txt")},
		{"relative dir/../file", "dir/../real/./file.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runTool(t, "read", envFor(t, "trusted/m", root), map[string]any{"path": tc.path})
			m := r.Message
			if m.IsError || r.Denied {
				t.Fatalf("error result: %s", m.Text())
			}
			if len(m.Parts) != 1 || m.Parts[0].SourcePath != want {
				t.Fatalf("parts %+v, want one part from %s", m.Parts, want)
			}
			if !slices.Equal(m.Meta.SourcePaths, []string{want}) {
				t.Fatalf("sourcePaths %q, want [%s]", m.Meta.SourcePaths, want)
			}
			if got := m.Parts[0].Text; got != "     1\thello\n     2\tworld\n" {
				t.Fatalf("text %q", got)
			}
		})
	}
}

func TestReadErrorsSayWhichAndWhy(t *testing.T) {
	root := tempTree(t, map[string]string{
		"bin.dat":   "abc\x00def",
		"short.txt": "one\ntwo\n",
		"empty.txt": "",
		"sub/x":     "x",
	})
	for _, tc := range []struct {
		name string
		in   map[string]any
		want string
	}{
		{"missing", map[string]any{"path": "nope.txt"}, filepath.Join(root, "nope.txt") + " does not exist"},
		{"directory", map[string]any{"path": "sub"}, filepath.Join(root, "sub") + " is a directory"},
		{"binary", map[string]any{"path": "bin.dat"}, "is a binary file"},
		{"offset past the end", map[string]any{"path": "short.txt", "offset": 5}, "offset 5 is past the end of " + filepath.Join(root, "short.txt") + ": it has 2 lines"},
		{"no path", map[string]any{}, "path is required"},
		{"unknown field", map[string]any{"path": "short.txt", "lines": 3}, `unknown field "lines"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runTool(t, "read", envFor(t, "trusted/m", root), tc.in)
			if !r.Message.IsError || r.Denied {
				t.Fatalf("want an error result, got %q (denied %v)", r.Message.Text(), r.Denied)
			}
			if !strings.Contains(r.Message.Text(), tc.want) {
				t.Fatalf("text %q does not say %q", r.Message.Text(), tc.want)
			}
			if r.Message.Meta.SourcePaths != nil || r.Message.Parts[0].SourcePath != "" {
				t.Fatalf("an error result carries sourcePaths %q", r.Message.Meta.SourcePaths)
			}
		})
	}
	t.Run("empty file", func(t *testing.T) {
		r := runTool(t, "read", envFor(t, "trusted/m", root), map[string]any{"path": "empty.txt"})
		if r.Message.IsError || r.Message.Text() != "(empty file)" {
			t.Fatalf("got %q", r.Message.Text())
		}
	})
	t.Run("permission", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads any file")
		}
		p := filepath.Join(root, "locked.txt")
		if err := os.WriteFile(p, []byte("x"), 0); err != nil {
			t.Fatal(err)
		}
		r := runTool(t, "read", envFor(t, "trusted/m", root), map[string]any{"path": p})
		if !strings.Contains(r.Message.Text(), "denies permission") {
			t.Fatalf("got %q", r.Message.Text())
		}
	})
}

func TestReadPagesThroughLongFiles(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	long := strings.Repeat("x", maxLineLen+500)
	root := tempTree(t, map[string]string{"long.txt": b.String(), "wide.txt": long + "\r\nnext\r\n"})
	env := envFor(t, "trusted/m", root)

	first := text(t, "read", env, map[string]any{"path": "long.txt"})
	if !strings.Contains(first, "  2000\tline 2000\n") || strings.Contains(first, "line 2001") {
		t.Fatalf("first page does not stop at line 2000: ...%s", first[len(first)-200:])
	}
	if !strings.HasSuffix(first, "[showing lines 1–2000; the file goes on: read again with offset=2001]") {
		t.Fatalf("no note on how to read on: ...%s", first[len(first)-200:])
	}
	rest := text(t, "read", env, map[string]any{"path": "long.txt", "offset": 2001})
	if !strings.HasPrefix(rest, "  2001\tline 2001\n") || !strings.HasSuffix(rest, "  2500\tline 2500\n") {
		t.Fatalf("second page: %q...", rest[:40])
	}
	window := text(t, "read", env, map[string]any{"path": "long.txt", "offset": 10, "limit": 2})
	if want := "    10\tline 10\n    11\tline 11\n[showing lines 10–11; the file goes on: read again with offset=12]"; window != want {
		t.Fatalf("window %q, want %q", window, want)
	}
	wide := text(t, "read", env, map[string]any{"path": "wide.txt"})
	if want := "     1\t" + long[:maxLineLen] + " … [line cut: 500 more bytes]\n     2\tnext\n"; wide != want {
		t.Fatalf("wide line: got ...%q", wide[len(wide)-80:])
	}
}

func TestReadStopsAtByteLimit(t *testing.T) {
	line := strings.Repeat("y", 1000) + "\n"
	root := tempTree(t, map[string]string{"big.txt": strings.Repeat(line, 400)})
	text := text(t, "read", envFor(t, "trusted/m", root), map[string]any{"path": "big.txt"})
	if len(text) > readMaxBytes+200 {
		t.Fatalf("read returned %d bytes, limit %d", len(text), readMaxBytes)
	}
	if !strings.Contains(text, "the file goes on: read again with offset=") {
		t.Fatalf("no paging note: ...%s", text[len(text)-120:])
	}
}
