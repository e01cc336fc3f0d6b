package claude

import (
	"strings"

	"github.com/scrim-dev/scrim/session"
)

// grepContent splits Grep content output into one part per run of lines
// from one file, attributed to that file. Match lines are
// "path:N:text" (or "path:text" without line numbers) and context lines
// "path-N-text"; the files are learnt from the match lines first, because
// '-' is too common in paths to find where a context line's path ends. Lines
// that name no file (a search of a single file prints none) belong to the
// searched path; lines after a file's output that name none ("--"
// separators, a pagination note) stay with it: when unsure, attribute.
func (p *parser) grepContent(text, searchPath, cwd string) []session.Part {
	lines := strings.Split(text, "\n")
	files := grepFiles(lines)
	var parts []session.Part
	cur, start := "", 0
	flush := func(end int) {
		if end <= start {
			return
		}
		src := cur
		if src == "" {
			src = searchPath
			if src == "" {
				src = cwd
			}
		}
		parts = append(parts, session.Part{
			Kind: session.PartToolResult, Text: strings.Join(lines[start:end], "\n"),
			SourcePath: p.paths.Canonical(src, cwd),
		})
		start = end
	}
	for i, ln := range lines {
		f := fileOf(ln, cur, files)
		if f == "" || f == cur {
			continue
		}
		flush(i)
		cur = f
	}
	flush(len(lines))
	return parts
}

// grepFiles collects the paths that match lines name.
func grepFiles(lines []string) map[string]bool {
	files := map[string]bool{}
	numbered := false
	for _, ln := range lines {
		if f := matchPath(ln); f != "" {
			files[f] = true
			numbered = true
		}
	}
	if numbered {
		return files
	}
	for _, ln := range lines { // no line numbers: "path:text"
		if i := strings.IndexByte(ln, ':'); i > 0 && strings.ContainsRune(ln[:i], '/') {
			files[ln[:i]] = true
		}
	}
	return files
}

// matchPath returns the path of a "path:N:text" line: the text before the
// first ":N:" ("" when there is none, or when nothing precedes it).
func matchPath(ln string) string {
	for i := 0; i < len(ln) && i < 4096; i++ {
		if ln[i] != ':' || i == 0 {
			continue
		}
		j := i + 1
		for j < len(ln) && ln[j] >= '0' && ln[j] <= '9' {
			j++
		}
		if j > i+1 && j < len(ln) && ln[j] == ':' {
			if allDigits(ln[:i]) {
				return "" // "N:M:text": a single file's output, no path
			}
			return ln[:i]
		}
	}
	return ""
}

// fileOf returns the known file that ln starts with (followed by ':' or
// '-'), preferring the current one, else "".
func fileOf(ln, cur string, files map[string]bool) string {
	if cur != "" && len(ln) > len(cur) && strings.HasPrefix(ln, cur) && (ln[len(cur)] == ':' || ln[len(cur)] == '-') {
		return cur
	}
	best := ""
	for i := 1; i < len(ln) && i < 4096; i++ {
		if ln[i] != ':' && ln[i] != '-' {
			continue
		}
		if files[ln[:i]] {
			best = ln[:i] // keep going: the longest known path wins
		}
	}
	return best
}
