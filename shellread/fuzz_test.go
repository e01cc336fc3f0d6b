package shellread

import (
	"os"
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
			if _, err := os.Lstat(file); err == nil && strings.ContainsAny(cmd, "*?[") {
				continue // a glob's match on this machine (the folder itself does not exist)
			}
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

// named reports whether file could come from a name in text: relative to
// the folder, the home folder or one of their parents (which ".." and cd
// reach), what is left of it is in the text with $HOME and ~ expanded.
// Quoting, escapes and brace expansion rearrange a name's characters but
// keep their order, so it must be a subsequence of the text.
func named(file, text string) bool {
	return namedIn(file, text) || namedIn(file, strings.NewReplacer("${HOME}", "/home/me", "$HOME", "/home/me", "~", "/home/me", "${PWD}", "/ws/p", "$PWD", "/ws/p").Replace(text))
}

func namedIn(file, text string) bool {
	for _, d := range []string{"/ws/p", "/home/me"} {
		for ; ; d = path.Dir(d) {
			if file == d || subsequence(strings.TrimPrefix(strings.TrimPrefix(file, d), "/"), text) && strings.HasPrefix(file, d) {
				return true
			}
			if d == "/" {
				break
			}
		}
	}
	return false
}

func subsequence(s, text string) bool {
	s = strings.ReplaceAll(s, "/", "") // joining a folder and a name adds them
	i := 0
	for j := 0; j < len(text) && i < len(s); j++ {
		if text[j] == s[i] {
			i++
		}
	}
	return i == len(s)
}
