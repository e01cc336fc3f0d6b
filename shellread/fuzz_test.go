package shellread

import (
	"path"
	"strings"
	"testing"
)

// FuzzRead runs arbitrary commands and outputs through the recogniser: it
// never panics; every file it returns is named by the command or its
// output; the parts join back to the output and name only returned files;
// an unknown answer cuts nothing.
func FuzzRead(f *testing.F) {
	for _, cs := range [][]readCase{readerCases, searchCases} {
		for _, c := range cs {
			f.Add(c.cmd, c.out)
		}
	}
	f.Add("cd src && rg -n -C1 x | head -3", "a.go-1-y\na.go:2:x\n")
	f.Add(`bash -lc "git diff"`, "diff --git a/k b/k\n+x\n")
	f.Add("for f in a b; do cat $f; done", "x")
	f.Add("x=$(cat a); echo $x | tee b; cat b", "x")
	f.Fuzz(func(t *testing.T, cmd, out string) {
		if len(cmd) > 2048 || len(out) > 1<<14 {
			return
		}
		r := Read(Command{Line: cmd, Dir: "/ws/p", Home: "/home/me"}, out, lexical)
		if r.Unknown != "" && r.Parts != nil {
			t.Fatalf("unknown (%s) but cut into parts", r.Unknown)
		}
		text := cmd + "\n" + out
		for _, file := range r.Files {
			if !named(file, text) {
				t.Fatalf("%q: file %s is named neither by the command nor by its output", cmd, file)
			}
		}
		if r.Parts != nil {
			var b strings.Builder
			files := map[string]bool{}
			for _, f := range r.Files {
				files[f] = true
			}
			for _, p := range r.Parts {
				b.WriteString(p.Text)
				if !files[p.File] {
					t.Fatalf("%q: part from %s, which is not among the files %v", cmd, p.File, r.Files)
				}
			}
			if b.String() != out {
				t.Fatalf("%q: parts join to %q, not the output %q", cmd, b.String(), out)
			}
		}
	})
}

// named reports whether file could come from a name in text: its last
// element appears there, or it is the folder, the home folder or one of
// their parents (which ".." and cd reach).
func named(file, text string) bool {
	for _, d := range []string{"/ws/p", "/home/me"} {
		for ; ; d = path.Dir(d) {
			if file == d {
				return true
			}
			if d == "/" {
				break
			}
		}
	}
	// Quoting, escapes and brace expansion rearrange a name's characters
	// but keep their order: the name must be a subsequence of the text.
	base := path.Base(file)
	i := 0
	for j := 0; j < len(text) && i < len(base); j++ {
		if text[j] == base[i] || text[j] == '\\' && base[i] == '/' {
			i++
		}
	}
	return i == len(base)
}
