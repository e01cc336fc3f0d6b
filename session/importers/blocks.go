package importers

import (
	"strings"

	"github.com/scrim-dev/scrim/shellread"
)

// FileBlocks reads the output of a grep tool that names each file on a
// line of its own ending in ":", the matches under it indented ("Found 2
// matches\n/w/a.go:\n  Line 3: x\n\n/w/b.go:\n  Line 1, Char 2: y", Crush's
// and opencode's): each file's block is a part attributed to it, the
// header before the first none. resolve gives a name's canonical forms (nil
// when it cannot be placed: the whole output is then of unknown source).
func FileBlocks(out string, resolve func(name string) []string) shellread.Reading {
	var r shellread.Reading
	seen := map[string]bool{}
	file := ""
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			r.Parts = append(r.Parts, shellread.Part{Text: cur.String(), File: file})
			cur.Reset()
		}
	}
	for _, l := range strings.SplitAfter(out, "\n") {
		line := strings.TrimRight(l, "\r\n")
		if strings.HasSuffix(line, ":") && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "Found ") {
			forms := resolve(strings.TrimSuffix(line, ":"))
			if len(forms) == 0 {
				return shellread.Reading{Unknown: "grep names a file that cannot be placed: " + line}
			}
			flush()
			file = forms[0]
			r.Files = AddFiles(r.Files, seen, forms)
		}
		cur.WriteString(l)
	}
	flush()
	if len(r.Files) == 0 {
		return shellread.Reading{Unknown: "grep output that names none of its files"}
	}
	return r
}

// AddFiles appends to files each of forms (a file's canonical forms) that
// seen does not have yet, and adds it to seen: a reading names each file
// once, however many times its output names it.
func AddFiles(files []string, seen map[string]bool, forms []string) []string {
	for _, f := range forms {
		if !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	return files
}
