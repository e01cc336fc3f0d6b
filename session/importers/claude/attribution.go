package claude

import (
	"strings"

	"github.com/scrim-dev/scrim/session"
)

// readParts splits a Read result into the file's lines, attributed to path,
// and a trailing <system-reminder> that Claude Code appends (not file
// content). Both line-number styles are recognised: "     N→" (older) and
// "N\t" (newer). Anything that does not look like that stays attributed:
// when unsure, the text counts as the file's.
func readParts(text, path string) []session.Part {
	body, tail := text, ""
	if end := numberedEnd(text); end > 0 && end < len(text) {
		rest := strings.TrimSpace(text[end:])
		if strings.HasPrefix(rest, "<system-reminder>") && strings.HasSuffix(rest, "</system-reminder>") {
			body, tail = strings.TrimRight(text[:end], "\n"), text[end:]
		}
	}
	parts := []session.Part{{Kind: session.PartToolResult, Text: body, SourcePath: path}}
	if tail != "" {
		parts = append(parts, session.Part{Kind: session.PartToolResult, Text: strings.TrimLeft(tail, "\n")})
	}
	return parts
}

// numberedEnd returns the offset just past the leading run of numbered
// lines, or 0 when the text does not start with one.
func numberedEnd(text string) int {
	off := 0
	for off < len(text) {
		nl := strings.IndexByte(text[off:], '\n')
		lineEnd := len(text)
		if nl >= 0 {
			lineEnd = off + nl
		}
		if !numbered(text[off:lineEnd]) {
			if lineEnd == off { // an empty line may separate the reminder
				off = lineEnd + 1
				continue
			}
			return off
		}
		if nl < 0 {
			return len(text)
		}
		off = lineEnd + 1
	}
	return off
}

// numbered reports whether s starts with a line-number prefix: optional
// spaces, digits, then "→" or a tab.
func numbered(s string) bool {
	i := 0
	for i < len(s) && s[i] == ' ' {
		i++
	}
	d := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == d {
		return false
	}
	return strings.HasPrefix(s[i:], "\t") || strings.HasPrefix(s[i:], "→")
}

// grepListed returns the canonical files a files_with_matches or count
// listing names, relative ones taken against cwd.
func (p *parser) grepListed(text string, filenames []string, cwd string) []string {
	var out []string
	if len(filenames) > 0 {
		for _, f := range filenames {
			out = append(out, p.paths.Forms(f, cwd)...)
		}
		return out
	}
	for _, ln := range strings.Split(text, "\n") {
		ln = strings.TrimSpace(ln)
		if ln == "" || strings.HasPrefix(ln, "Found ") || strings.HasPrefix(ln, "No files found") || strings.HasPrefix(ln, "No matches found") || strings.HasPrefix(ln, "[") {
			continue
		}
		if i := strings.LastIndexByte(ln, ':'); i > 0 && allDigits(ln[i+1:]) {
			ln = ln[:i] // count mode: path:N
		}
		out = append(out, p.paths.Forms(ln, cwd)...)
	}
	return out
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
