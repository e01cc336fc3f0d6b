package claude

import (
	"os"
	"strings"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/shellread"
)

// grepContent cuts Grep content output into one part per run of lines
// from one file, attributed to that file (shellread.SplitSearch). Match
// lines are "name:N:text" (or "name:text" without line numbers) and context
// lines "name-N-text"; Claude Code prints names relative to the working
// folder inside it and absolute outside it. A search of a single file
// prints no names: its output is that file's.
func (p *parser) grepContent(m *session.Message, c *call, text, cwd string) {
	searched := c.In.Path
	if searched == "" {
		searched = cwd
	}
	forms := p.paths.Forms(searched, cwd)
	whole := func() { m.Attribute(shellread.Reading{Files: forms}, "", text, "") }
	kind := fileKind(forms)
	if kind == isFile {
		whole()
		return
	}
	roots := []string{"", "/", searched}
	for _, d := range []string{cwd, searched} {
		if _, ok := policy.DrivePath(d); ok {
			roots = append(roots, d[:2])
		}
	}
	numbered := c.In.Numbered == nil || *c.In.Numbered // on by default
	parts, files, ok := shellread.SplitSearch(text, shellread.Search{Dir: cwd, Roots: roots, Numbered: numbered, Context: true}, p.paths.Resolve)
	if ok && kind == isMissing && len(forms) > 0 && !anyUnder(files, forms[0]) {
		ok = false // one file's lines that look like names
	}
	if !ok {
		t := strings.TrimSpace(text)
		if t == "" || strings.HasPrefix(t, "No matches found") || strings.HasPrefix(t, "No files found") {
			m.Parts = []session.Part{{Kind: session.PartToolResult, Text: text}}
			m.Meta.NoFiles = true
			return
		}
		whole()
		if kind == isDir {
			m.Meta.UnknownSource = "the search's output names no files"
		}
		m.Meta.NoFiles = false
		return
	}
	m.Attribute(shellread.Reading{Files: files, Parts: parts}, "", text, "")
}

type pathKind int

const (
	isMissing pathKind = iota
	isFile
	isDir
)

// fileKind says what the first form names on this machine.
func fileKind(forms []string) pathKind {
	if len(forms) == 0 {
		return isMissing
	}
	fi, err := os.Stat(forms[0])
	switch {
	case err != nil:
		return isMissing
	case fi.IsDir():
		return isDir
	}
	return isFile
}

// anyUnder reports whether any of files lies below dir.
func anyUnder(files []string, dir string) bool {
	for _, f := range files {
		if strings.HasPrefix(f, strings.TrimSuffix(dir, "/")+"/") {
			return true
		}
	}
	return false
}
