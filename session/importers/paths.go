package importers

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/scrim-dev/scrim/policy"
)

// Paths canonicalises the paths a transcript names, as they are on this
// machine, remembering each answer (a transcript names the same files again
// and again).
type Paths struct {
	memo map[pathKey]string
	home string
}

type pathKey struct{ path, cwd string }

// NewPaths returns an empty resolver.
func NewPaths() *Paths {
	home, _ := os.UserHomeDir()
	return &Paths{memo: map[pathKey]string{}, home: home}
}

// Canonical returns the canonical absolute form of path; a relative path is
// taken relative to cwd (the line's working folder). A path that does not
// exist (any more) is canonicalised as far as it exists and still returned:
// content read from it is still that file's. "" means no path was given.
func (p *Paths) Canonical(path, cwd string) string {
	if path = strings.TrimSpace(path); path == "" || strings.IndexByte(path, 0) >= 0 {
		return ""
	}
	key := pathKey{path, cwd}
	if c, ok := p.memo[key]; ok {
		return c
	}
	// Join without cleaning: "link/../x" is the link target's sibling, as
	// the agent's read saw it, and only policy.Canonical walks ".." that way.
	// A lexical clean would attribute the content of secrets/x, read through
	// "public/link-to-secrets/sub/../x", to public/x.
	abs := path
	switch {
	case path == "~" || strings.HasPrefix(path, "~/"):
		abs = p.home + "/" + path[1:]
	case !filepath.IsAbs(path):
		if !filepath.IsAbs(cwd) {
			// No working folder recorded: anchor at the root rather than at
			// wherever scrim runs, which has nothing to do with the session.
			cwd = "/"
		}
		abs = cwd + "/" + path
	}
	c, err := policy.Canonical(abs)
	if err != nil {
		// A loop or an unreadable folder: keep the path as named, so the
		// content is still attributed (the policy decides it as given).
		c = filepath.Clean(abs)
	}
	p.memo[key] = c
	return c
}

// ModelID maps a transcript's model name to a scrim model ID
// (provider/model), so the policy's model rules apply: "claude-sonnet-4-5"
// from Claude Code becomes "anthropic/claude-sonnet-4-5". "" when unknown.
func ModelID(provider, model string) string {
	model = strings.TrimSpace(model)
	if model == "" || strings.HasPrefix(model, "<") { // Claude Code's "<synthetic>"
		return ""
	}
	provider = strings.ToLower(strings.TrimSpace(provider))
	if provider == "" {
		return model
	}
	return provider + "/" + model
}

// Title makes a one-line session title from a prompt or summary.
func Title(s string) string {
	if len(s) > 1024 {
		s = strings.ToValidUTF8(s[:1024], "")
	}
	s = strings.Join(strings.Fields(s), " ")
	const max = 80
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}
