package importers

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/scrim-dev/scrim/policy"
)

// Paths canonicalises the paths a transcript names, as they are on this
// machine, remembering each answer (a transcript names the same files again
// and again, and so do the other transcripts of its project). Safe for
// concurrent use: the files of a run, imported side by side, share one.
type Paths struct {
	mu   sync.RWMutex
	memo map[pathKey][]string
	home string
}

type pathKey struct{ path, cwd string }

// maxMemo bounds the answers a Paths keeps (a few MiB).
const maxMemo = 1 << 15

// NewPaths returns an empty resolver.
func NewPaths() *Paths {
	home, _ := os.UserHomeDir()
	return &Paths{memo: map[pathKey][]string{}, home: home}
}

// Home is the home folder ~ names.
func (p *Paths) Home() string { return p.home }

// Canonical returns the canonical absolute form of path; a relative path is
// taken relative to cwd (the line's working folder). A path that does not
// exist (any more) is canonicalised as far as it exists and still returned:
// content read from it is still that file's. "" means no path was given.
func (p *Paths) Canonical(path, cwd string) string {
	if f := p.Forms(path, cwd); len(f) > 0 {
		return f[0]
	}
	return ""
}

// Forms returns every canonical form of path (policy.Forms): when ".."
// follows a symlink, the agent may have resolved it by name (Claude Code's
// Read cleans paths) or the kernel physically (a shell command), and a
// redaction must deny the content if either form is denied. A path on a
// Windows drive is recorded as policy.DrivePath gives it, with forward
// slashes, so that the same patterns decide it.
func (p *Paths) Forms(path, cwd string) []string {
	if path = strings.TrimSpace(path); path == "" || strings.IndexByte(path, 0) >= 0 {
		return nil
	}
	key := pathKey{path, cwd}
	p.mu.RLock()
	c, ok := p.memo[key]
	p.mu.RUnlock()
	if ok {
		return c
	}
	// Join without cleaning: "link/../x" is the link target's sibling, as
	// the kernel sees it, and only policy.Canonical walks ".." that way.
	// A lexical clean alone would attribute the content of secrets/x, read
	// through "public/link-to-secrets/sub/../x", to public/x.
	var forms []string
	if d, ok := policy.DrivePath(path); ok {
		forms = []string{d}
	} else if d, ok := policy.DrivePath(cwd); ok && !strings.HasPrefix(path, "/") && !strings.HasPrefix(path, "~") {
		if w, ok := policy.DrivePath(d + "/" + strings.ReplaceAll(path, `\`, "/")); ok {
			forms = []string{w}
		}
	} else {
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
		forms = policy.Forms(abs)
	}
	p.mu.Lock()
	if len(p.memo) >= maxMemo {
		clear(p.memo) // a run over a whole tree would otherwise keep every path
	}
	p.memo[key] = forms
	p.mu.Unlock()
	return forms
}

// Resolve is Forms as a shellread.Resolver, with ~ taken as this machine's
// home folder.
func (p *Paths) Resolve(name, dir string) []string {
	if !filepath.IsAbs(dir) {
		if _, ok := policy.DrivePath(dir); !ok && !filepath.IsAbs(name) {
			if _, ok := policy.DrivePath(name); !ok {
				return nil
			}
		}
	}
	return p.Forms(name, dir)
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

// FirstFile is the first of files that is a regular file now (through any
// symbolic link), or "": which of the places an agent looks for a file it
// read without naming it (a command's Markdown, an instructions file) holds
// one.
func FirstFile(files ...string) string {
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			return f
		}
	}
	return ""
}
