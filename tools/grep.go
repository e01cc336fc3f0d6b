package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/scrim-dev/scrim/policy"
)

// Limits of one grep: enough to find things, small enough to stay readable.
const (
	grepDefaultMatches = 200
	grepMaxMatches     = 2000
	grepMaxBytes       = 128 << 10
	grepTimeout        = 20 * time.Second
	// grepMaxLineShown cuts a matching line in the output; matching itself
	// sees the line up to maxLineLen.
	grepMaxLineShown = 500
)

func init() { register(grepTool{}) }

type grepTool struct{}

type grepInput struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path,omitempty"`
	Glob       string `json:"glob,omitempty"`
	IgnoreCase bool   `json:"ignore_case,omitempty"`
	MaxMatches int    `json:"max_matches,omitempty"`
}

func (grepTool) Name() string { return "grep" }

func (grepTool) Description() string {
	return "Search file contents with a regular expression (Go RE2 syntax). Returns matching lines as path:line:text, grouped by file. Searches a file or a folder (default: the working folder) recursively, skipping .git/, binary files and anything .gitignore excludes."
}

func (grepTool) Schema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"pattern":     map[string]any{"type": "string", "description": "Regular expression, Go RE2 syntax (no backreferences or lookaround)."},
			"path":        map[string]any{"type": "string", "description": "File or folder to search: absolute, or relative to the working folder (default: the working folder)."},
			"glob":        map[string]any{"type": "string", "description": "Only search files whose name (or, if it contains a slash, path relative to the search folder) matches this glob, e.g. \"*.go\" or \"src/**/*.ts\"."},
			"ignore_case": map[string]any{"type": "boolean", "description": "Match case-insensitively."},
			"max_matches": map[string]any{"type": "integer", "minimum": 1, "maximum": grepMaxMatches, "description": "Stop after this many matching lines (default 200)."},
		},
		"required":             []string{"pattern"},
		"additionalProperties": false,
	}
}

func (t grepTool) Run(ctx context.Context, env Env, input json.RawMessage) Result {
	return t.run(ctx, env, input, full)
}

// grepRun is the state of one search.
type grepRun struct {
	root     string // the canonical root, to tell a file reached through a link
	rootFile bool   // the root is the one file searched
	re       *regexp.Regexp
	glob     string
	gate     gate
	max      int
	matches  int
	bytes    int
	denied   int
	binary   int
	unread   int
	stopped  string // why the search ended early; "" if it did not
	parts    []partOut
	lines    *lineReader // reused for every file
	sniff    []byte
}

type partOut struct {
	text, source string
}

func (grepTool) run(ctx context.Context, env Env, input json.RawMessage, m mode) Result {
	var in grepInput
	if err := decode(input, &in); err != nil {
		return errorResult(env, "grep", "grep failed: %v", err)
	}
	if in.Pattern == "" {
		return errorResult(env, "grep", "grep failed: pattern is required")
	}
	expr := in.Pattern
	if in.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return errorResult(env, "grep", "grep failed: pattern %q is not a valid Go RE2 regular expression: %v", in.Pattern, err)
	}
	if in.Glob != "" && !doublestar.ValidatePattern(in.Glob) {
		return errorResult(env, "grep", "grep failed: glob %q is not a valid pattern", in.Glob)
	}
	if in.MaxMatches < 0 {
		return errorResult(env, "grep", "grep failed: max_matches must be positive")
	}
	limit := in.MaxMatches
	if limit == 0 {
		limit = grepDefaultMatches
	}
	limit = min(limit, grepMaxMatches)
	root := env.abs(in.Path)
	ctx, cancel := withTimeout(ctx, grepTimeout)
	defer cancel()
	g := &grepRun{re: re, glob: in.Glob, gate: newGate(env, m), max: limit}
	if c, err := policy.Canonical(root); err == nil {
		g.root = c // a root reached through a link is not worth naming on every line
		if fi, err := os.Stat(c); err == nil && !fi.IsDir() {
			g.rootFile = true
		}
	}
	w := &walker{ctx: ctx, visit: g.file}
	err = w.walk(root)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		g.stopped = fmt.Sprintf("[search stopped after %s: results are incomplete; search a smaller folder or use glob]", grepTimeout)
	case errors.Is(err, context.Canceled):
		g.stopped = "[search cancelled: results are incomplete]"
	case err != nil:
		return errorResult(env, "grep", "grep failed: %v", describeOpenErr(root, err))
	}
	g.unread += w.unreadable
	return g.result(env, in.Pattern, root)
}

// file searches one file; it returns errStop when a limit is reached.
func (g *grepRun) file(abs, rel string) error {
	if g.glob != "" && !globMatches(g.glob, rel) {
		return nil
	}
	source, ok, err := g.gate.check(abs)
	if err != nil {
		g.unread++
		return nil
	}
	if !ok {
		g.denied++
		return nil
	}
	shown := source
	switch {
	case shown == "":
		shown = abs
	case g.root != "" && !g.rootFile && source != filepath.Join(g.root, rel):
		// Reached through a link below the root: the name walked, and the
		// file it is, so that two copies of one line tell which is the link.
		shown = abs + " (→ " + source + ")"
	}
	f, head, err := openText(abs, source, g.sniff)
	if err != nil {
		if errors.As(err, new(binaryError)) {
			g.binary++
		} else {
			g.unread++
		}
		return nil
	}
	defer f.Close()
	var b strings.Builder
	if g.lines == nil {
		g.lines = newLineReader(nil)
		g.sniff = make([]byte, sniffSize)
	}
	lr := g.lines
	lr.reset(io.MultiReader(head, f))
	stop := error(nil)
	for n := 1; ; n++ {
		line, _, err := lr.next()
		if line == nil {
			if err != nil && err != io.EOF {
				g.unread++
			}
			break
		}
		if g.re.Match(line) {
			if g.matches == g.max {
				g.stopped = fmt.Sprintf("[stopped after %d matches: narrow the pattern, path or glob, or raise max_matches (at most %d)]", g.max, grepMaxMatches)
				stop = errStop
				break
			}
			if g.bytes+b.Len()+len(shown)+len(line) > grepMaxBytes {
				g.stopped = fmt.Sprintf("[stopped at %d KiB of output: narrow the pattern, path or glob]", grepMaxBytes>>10)
				stop = errStop
				break
			}
			g.matches++
			writeMatch(&b, shown, n, line)
		}
		if err != nil {
			break
		}
	}
	if b.Len() > 0 {
		g.bytes += b.Len()
		g.parts = append(g.parts, partOut{text: strings.TrimSuffix(b.String(), "\n"), source: source})
	}
	return stop
}

func writeMatch(b *strings.Builder, path string, n int, line []byte) {
	b.WriteString(path)
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(n))
	b.WriteByte(':')
	if len(line) > grepMaxLineShown {
		b.WriteString(strings.ToValidUTF8(string(line[:grepMaxLineShown]), "\uFFFD"))
		b.WriteString(" …")
	} else {
		b.WriteString(strings.ToValidUTF8(string(line), "\uFFFD"))
	}
	b.WriteByte('\n')
}

// globMatches applies grep's glob filter: a pattern without a slash matches
// the file's name at any depth, one with a slash its path below the root.
func globMatches(glob, rel string) bool {
	if !strings.Contains(glob, "/") {
		rel = rel[strings.LastIndexByte(rel, '/')+1:]
	}
	return doublestar.MatchUnvalidated(glob, rel)
}

func (g *grepRun) result(env Env, pattern, root string) Result {
	msg := newResult(env, "grep")
	for _, p := range g.parts {
		msg.Parts = append(msg.Parts, textPart(p.text, p.source))
	}
	var notes []string
	if len(g.parts) == 0 {
		notes = append(notes, fmt.Sprintf("No matches for %q in %s.", pattern, root))
	}
	if g.stopped != "" {
		notes = append(notes, g.stopped)
	}
	if g.denied > 0 {
		notes = append(notes, fmt.Sprintf("[skipped %s that trust tier %q may not read]", plural(g.denied, "file"), g.gate.label()))
	}
	if g.binary > 0 {
		notes = append(notes, fmt.Sprintf("[skipped %s]", plural(g.binary, "binary file")))
	}
	if g.unread > 0 {
		notes = append(notes, fmt.Sprintf("[%s could not be read]", plural(g.unread, "file or folder")))
	}
	if len(notes) > 0 {
		msg.Parts = append(msg.Parts, textPart(strings.Join(notes, "\n"), ""))
	}
	return finish(msg)
}
