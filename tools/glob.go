package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/scrim-dev/scrim/session"
)

// Limits of one glob.
const (
	globMaxNames     = 1000
	globMaxFiles     = 200 // files whose content is returned
	globMaxFileLines = 2000
	globMaxFileBytes = 64 << 10
	globMaxBytes     = 256 << 10
	globTimeout      = 20 * time.Second
)

func init() { register(globTool{}) }

type globTool struct{}

type globInput struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"`
	Content bool   `json:"content,omitempty"`
}

func (globTool) Name() string { return "glob" }

func (globTool) Description() string {
	return "Find files by name pattern (doublestar globs: * within a name, ** across folders, {a,b} alternatives). Returns sorted absolute paths; with content=true also each file's numbered lines. Skips .git/ and anything .gitignore excludes."
}

func (globTool) Schema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"pattern": map[string]any{"type": "string", "description": "Glob relative to path, e.g. \"**/*.go\" or \"cmd/*/main.go\"; an absolute glob ignores path."},
			"path":    map[string]any{"type": "string", "description": "Folder to search: absolute, or relative to the working folder (default: the working folder)."},
			"content": map[string]any{"type": "boolean", "description": "Also return each matched file's content (numbered lines, 64 KiB per file)."},
		},
		"required":             []string{"pattern"},
		"additionalProperties": false,
	}
}

func (t globTool) Run(ctx context.Context, env Env, input json.RawMessage) Result {
	return t.run(ctx, env, input, full)
}

type globHit struct {
	abs, source string
}

func (globTool) run(ctx context.Context, env Env, input json.RawMessage, m mode) Result {
	var in globInput
	if err := decode(input, &in); err != nil {
		return errorResult(env, "glob", "glob failed: %v", err)
	}
	if in.Pattern == "" {
		return errorResult(env, "glob", "glob failed: pattern is required")
	}
	base, pat := env.abs(in.Path), filepath.ToSlash(in.Pattern)
	if filepath.IsAbs(in.Pattern) {
		base, pat = doublestar.SplitPattern(filepath.Clean(in.Pattern))
	}
	if !doublestar.ValidatePattern(pat) {
		return errorResult(env, "glob", "glob failed: %q is not a valid glob pattern", in.Pattern)
	}
	// Walk only below the pattern's literal folders: "src/**/*.go" walks src.
	lit, rest := doublestar.SplitPattern(pat)
	root := filepath.Join(base, filepath.FromSlash(lit))
	ctx, cancel := withTimeout(ctx, globTimeout)
	defer cancel()
	g := newGate(env, m)
	var hits []globHit
	denied := 0
	w := &walker{ctx: ctx, visit: func(abs, rel string) error {
		if ok := doublestar.MatchUnvalidated(rest, rel); !ok {
			return nil
		}
		source, ok, err := g.check(abs)
		switch {
		case err != nil:
			return nil
		case !ok:
			denied++
			return nil
		}
		hits = append(hits, globHit{abs: abs, source: source})
		return nil
	}}
	err := w.walk(root)
	var notes []string
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		notes = append(notes, fmt.Sprintf("[listing stopped after %s: results are incomplete; use a narrower pattern]", globTimeout))
	case errors.Is(err, context.Canceled):
		notes = append(notes, "[listing cancelled: results are incomplete]")
	case errors.Is(err, fs.ErrNotExist):
		// A literal folder of the pattern that does not exist matches nothing.
	case err != nil:
		return errorResult(env, "glob", "glob failed: %v", describeOpenErr(root, err))
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].abs < hits[j].abs })
	if denied > 0 {
		notes = append(notes, fmt.Sprintf("[skipped %s that trust tier %q may not read]", plural(denied, "file"), g.label()))
	}
	if w.unreadable > 0 {
		notes = append(notes, fmt.Sprintf("[%s could not be listed]", plural(w.unreadable, "folder")))
	}
	if len(hits) == 0 {
		notes = append([]string{fmt.Sprintf("No files match %q in %s.", in.Pattern, base)}, notes...)
	}
	msg := newResult(env, "glob")
	if in.Content {
		msg.Parts = append(msg.Parts, globContent(hits, &notes)...)
	} else {
		msg.Parts = append(msg.Parts, globNames(hits, &notes)...)
	}
	if len(notes) > 0 {
		msg.Parts = append(msg.Parts, textPart(strings.Join(notes, "\n"), ""))
	}
	return finish(msg)
}

// globNames lists paths only: names are not file content, so the part is
// not attributed and the result carries no sourcePaths.
func globNames(hits []globHit, notes *[]string) []session.Part {
	if len(hits) == 0 {
		return nil
	}
	shown := hits
	if len(shown) > globMaxNames {
		shown = shown[:globMaxNames]
		*notes = append(*notes, fmt.Sprintf("[showing the first %d of %d files: use a narrower pattern]", globMaxNames, len(hits)))
	}
	var b strings.Builder
	for i, h := range shown {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(h.abs)
	}
	return []session.Part{textPart(b.String(), "")}
}

// globContent returns one part per file, attributed to that file, until the
// limits; the files left out are listed by name.
func globContent(hits []globHit, notes *[]string) []session.Part {
	var parts []session.Part
	var left []string
	total := 0
	for _, h := range hits {
		if len(parts) == globMaxFiles || total >= globMaxBytes {
			left = append(left, h.abs)
			continue
		}
		shown := h.source
		if shown == "" {
			shown = h.abs
		}
		text, err := readNumbered(h.abs, 1, globMaxFileLines, min(globMaxFileBytes, globMaxBytes-total))
		if err != nil {
			*notes = append(*notes, "[not shown: "+oneLine(err.Error())+"]")
			continue
		}
		text = "==> " + shown + " <==\n" + text
		total += len(text)
		parts = append(parts, textPart(text, h.source))
	}
	if len(left) > 0 {
		*notes = append(*notes, fmt.Sprintf("[content limit reached (%d files or %d KiB); %s matched but not shown: read them one by one]\n%s",
			globMaxFiles, globMaxBytes>>10, plural(len(left), "more file"), strings.Join(left, "\n")))
	}
	return parts
}
