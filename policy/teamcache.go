package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/scrim-dev/scrim/internal/userdirs"
)

// recheckTeam is how long what a folder holds is trusted before it is looked
// at again: an edited, added or removed team file takes effect within this
// time, while a redaction deciding thousands of paths stats each folder once.
const recheckTeam = time.Second

// maxTeamDirs bounds the folders remembered; past it the memory starts over.
const maxTeamDirs = 1 << 16

// teamCache finds, reads and remembers the team files of each folder, for
// every tier of one policy. It is safe for concurrent use.
type teamCache struct {
	formats []*TeamFormat // used by some tier, in TeamFormats order
	names   []string      // what is looked up in each folder
	globals []globalFile
	home    string
	recheck time.Duration
	now     func() time.Time

	mu     sync.Mutex
	dirs   map[string]*teamDir
	glob   *teamDir
	forgot bool // dirs was emptied once (maxTeamDirs): TeamSnapshot cannot say
}

type globalFile struct {
	path   string
	format *TeamFormat
}

// teamDir is what one folder holds. It is replaced, never changed, when the
// folder changes, so a caller may read it after the lock is let go.
type teamDir struct {
	path    string
	checked time.Time
	chain   *chain // from here up, when a path in this folder was decided
	repo    bool   // holds .git: a repository's root
	problem string // its team files could not be looked for
	files   []*TeamFile
	seen    []stamp // of each name looked up, present or not
}

// stamp is enough of a file's stat to tell that it changed.
type stamp struct {
	exists      bool
	size, mtime int64
	ino         uint64
}

func newTeamCache(formats []*TeamFormat, env userdirs.Lookup) *teamCache {
	c := &teamCache{formats: formats, recheck: recheckTeam, now: time.Now, dirs: map[string]*teamDir{}}
	if home, err := userdirs.Home(env); err == nil && filepath.IsAbs(home) {
		c.home = filepath.Clean(home)
	}
	claudeDir := ""
	if c.home != "" {
		claudeDir = filepath.Join(c.home, ".claude")
	}
	if v, ok := env("CLAUDE_CONFIG_DIR"); ok && filepath.IsAbs(v) {
		claudeDir = filepath.Clean(v) // where Claude Code keeps the user's settings then
	}
	for _, f := range formats {
		c.names = append(c.names, f.inDir...)
		for _, h := range f.home {
			switch {
			case f.syn == claudeSyntax && claudeDir != "":
				c.globals = append(c.globals, globalFile{filepath.Join(claudeDir, "settings.json"), f})
			case f.syn != claudeSyntax && c.home != "":
				c.globals = append(c.globals, globalFile{filepath.Join(c.home, filepath.FromSlash(h)), f})
			}
		}
		for _, s := range f.system {
			c.globals = append(c.globals, globalFile{s, f})
		}
	}
	return c
}

// shareTeamCache gives every tier with deny_files one cache, over the
// formats any of them names.
func (p *Policy) shareTeamCache() {
	used := map[*TeamFormat]bool{}
	for _, t := range p.Tiers {
		for _, f := range t.DenyFiles {
			used[f] = true
		}
	}
	if len(used) == 0 {
		return
	}
	var formats []*TeamFormat
	for _, f := range TeamFormats {
		if used[f] {
			formats = append(formats, f)
		}
	}
	p.team = newTeamCache(formats, p.env)
	for _, t := range p.Tiers {
		if len(t.DenyFiles) > 0 {
			t.team = p.team
			for _, f := range t.DenyFiles {
				t.teamMask |= f.mask
			}
		}
	}
}

// look stats the names of one folder (".git" first).
func (c *teamCache) look(dir string) ([]stamp, string) {
	out := make([]stamp, 1+len(c.names))
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		out[0].exists = true
	}
	for i, name := range c.names {
		s, err := stampOf(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return nil, fmt.Sprintf("cannot look for team files in %s: %s", dir, plainErr(err))
		}
		out[1+i] = s
	}
	return out, ""
}

// stampOf stats path; absent is not an error, being unable to tell is.
func stampOf(path string) (stamp, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return stamp{}, nil
	}
	if err != nil {
		return stamp{}, err
	}
	return stamp{exists: true, size: fi.Size(), mtime: fi.ModTime().UnixNano(), ino: inode(fi)}, nil
}

// dir returns what folder path holds; c.mu is held.
func (c *teamCache) dir(path string, now time.Time) *teamDir {
	e := c.dirs[path]
	if e != nil && now.Sub(e.checked) < c.recheck {
		return e
	}
	seen, problem := c.look(path)
	if e != nil && e.problem == problem && slices.Equal(e.seen, seen) {
		e.checked = now
		return e
	}
	e = &teamDir{path: strings.Clone(path), checked: now, seen: seen, problem: problem}
	if problem == "" {
		e.repo = seen[0].exists
		i := 1
		for _, f := range c.formats {
			for _, name := range f.inDir {
				if seen[i].exists && !c.isGlobal(filepath.Join(path, name)) {
					e.files = append(e.files, readTeamFile(filepath.Join(path, filepath.FromSlash(name)), f, path, false, c.home))
				}
				i++
			}
		}
	}
	if len(c.dirs) >= maxTeamDirs {
		c.dirs, c.forgot = map[string]*teamDir{}, true
	}
	c.dirs[e.path] = e
	return e
}

// isGlobal: ~/.claude/settings.json is the user's settings, not a project's,
// even when a path under the home folder finds it.
func (c *teamCache) isGlobal(path string) bool {
	for _, g := range c.globals {
		if g.path == path {
			return true
		}
	}
	return false
}

// global returns the global files; c.mu is held. One that cannot be looked
// at is a file with a Problem: it denies every path (fail closed).
func (c *teamCache) global(now time.Time) *teamDir {
	e := c.glob
	if e != nil && now.Sub(e.checked) < c.recheck {
		return e
	}
	seen, problems := c.globalStampsEach()
	if e != nil && slices.Equal(e.seen, seen) && e.problem == strings.Join(problems, "") {
		e.checked = now
		return e
	}
	e = &teamDir{checked: now, seen: seen, problem: strings.Join(problems, "")}
	for i, g := range c.globals {
		switch {
		case problems[i] != "":
			tf := &TeamFile{Path: g.path, Format: g.format}
			tf.fail(problems[i])
			tf.setReasons()
			e.files = append(e.files, tf)
		case seen[i].exists:
			e.files = append(e.files, readTeamFile(g.path, g.format, "", true, c.home))
		}
	}
	c.glob = e
	return e
}

// globalStampsEach stats the global files, with a problem for each that
// cannot be looked at.
func (c *teamCache) globalStampsEach() ([]stamp, []string) {
	seen := make([]stamp, len(c.globals))
	problems := make([]string, len(c.globals))
	for i, g := range c.globals {
		s, err := stampOf(g.path)
		if err != nil {
			problems[i] = fmt.Sprintf("cannot look for %s: %s", g.path, plainErr(err))
		}
		seen[i] = s
	}
	return seen, problems
}

// globalStamps is globalStampsEach as the global entry keeps it.
func (c *teamCache) globalStamps() ([]stamp, string) {
	seen, problems := c.globalStampsEach()
	return seen, strings.Join(problems, "")
}

// maxTeamDepth bounds the folders walked up from one path.
const maxTeamDepth = 64

// chain is the folders from a path's own up to its repository root (or the
// filesystem root), nearest first, and the global files. It is built once
// per folder per recheck and kept on the folder's entry; it is never changed.
type chain struct {
	at      time.Time
	dirs    []*teamDir
	glob    *teamDir
	problem string // a folder of it could not be looked in
	present uint16 // the formats some file of it has
	rootLen int    // components of the repository root
	hasRoot bool
}

func (c *teamCache) chainOf(path string) *chain {
	now := c.now()
	leaf := parentDir(path)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.dirs[leaf]; e != nil && e.chain != nil && now.Sub(e.chain.at) < c.recheck {
		return e.chain
	}
	ch := &chain{at: now, glob: c.global(now)}
	for d := leaf; len(ch.dirs) < maxTeamDepth; d = parentDir(d) {
		e := c.dir(d, now)
		ch.dirs = append(ch.dirs, e)
		if e.problem != "" && ch.problem == "" {
			ch.problem = e.problem
		}
		if e.repo || d == "/" {
			break
		}
	}
	for _, e := range append(ch.dirs[:len(ch.dirs):len(ch.dirs)], ch.glob) {
		for _, tf := range e.files {
			ch.present |= tf.Format.mask
		}
	}
	if root := ch.root(); root != "" {
		ch.hasRoot, ch.rootLen = true, len(components(root))
	}
	ch.dirs[0].chain = ch
	return ch
}

// parentDir is filepath.Dir for a clean absolute path, without allocating.
func parentDir(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i <= 0 {
		return "/"
	}
	return path[:i]
}

// root is the repository root of the chain, "" when it is in none.
func (ch *chain) root() string {
	if n := len(ch.dirs); n > 0 && ch.dirs[n-1].repo {
		return ch.dirs[n-1].path
	}
	return ""
}

// pathView is a path being decided, split into go-git's components on
// first need.
type pathView struct {
	path    string
	comps   []string
	rootLen int // components of the repository root
	hasRoot bool
}

func (v *pathView) components() []string {
	if v.comps == nil {
		v.comps = components(v.path)
	}
	return v.comps
}

// deny decides path (absolute and clean) by the team files of the formats
// in mask: a Decision and true when one of them denies it.
func (c *teamCache) deny(mask uint16, path string) (Decision, bool) {
	if !strings.HasPrefix(path, "/") {
		return Decision{}, false // another machine's path: no files here govern it
	}
	ch := c.chainOf(path)
	if ch.problem != "" {
		return Decision{Kind: "deny", Reason: ch.problem + "; denied (fail closed)"}, true
	}
	mask &= ch.present
	if mask == 0 {
		return Decision{}, false
	}
	v := &pathView{path: path, rootLen: ch.rootLen, hasRoot: ch.hasRoot}
	for _, f := range TeamFormats {
		if mask&f.mask == 0 {
			continue
		}
		if h, ok := ch.denies(f, v); ok {
			return h.decision(), true
		}
	}
	return Decision{}, false
}

// teamHit is the rule that decided.
type teamHit struct {
	file *TeamFile
	rule *teamRule
}

func (h teamHit) decision() Decision {
	d := Decision{Kind: "deny", Pattern: h.rule.raw, Line: h.rule.line, File: h.file.Path, Reason: h.rule.reason}
	if h.rule.all {
		d.Pattern = "" // not a pattern that matched: the reason says why everything is denied
	}
	return d
}

// denies decides v by format f the way git decides by .gitignore files: the
// last matching line of the nearest file wins (globals are the farthest), a
// folder only-pattern needs a folder, and a path below an excluded folder
// stays excluded whatever a negation says.
func (ch *chain) denies(f *TeamFormat, v *pathView) (teamHit, bool) {
	h, res := ch.last(f, v, false)
	if res != gitignore.Exclude && ch.hasDirOnly(f) {
		// "secrets/" matches a folder only: if the path itself may be one,
		// ask the file system (a path that cannot be looked at is taken
		// to be a folder: fail closed).
		if hd, rd := ch.last(f, v, true); rd == gitignore.Exclude {
			if fi, err := os.Stat(v.path); err != nil || fi.IsDir() {
				h, res = hd, rd
			}
		}
	}
	switch res {
	case gitignore.Exclude:
		return h, true
	case gitignore.Include:
		comps := v.components()
		for k := len(comps) - 1; k >= 1; k-- {
			up := &pathView{path: "/" + strings.Join(comps[:k], "/"), comps: comps[:k], rootLen: v.rootLen, hasRoot: v.hasRoot}
			if hu, ru := ch.last(f, up, true); ru == gitignore.Exclude {
				return hu, true
			}
		}
	}
	return teamHit{}, false
}

func (ch *chain) hasDirOnly(f *TeamFormat) bool {
	for _, e := range ch.dirs {
		for _, tf := range e.files {
			if tf.Format == f && tf.dirOnly {
				return true
			}
		}
	}
	for _, tf := range ch.glob.files {
		if tf.Format == f && tf.dirOnly {
			return true
		}
	}
	return false
}

// last finds the rule of format f that decides v: the last matching line of
// the nearest file that has one.
func (ch *chain) last(f *TeamFormat, v *pathView, isDir bool) (teamHit, gitignore.MatchResult) {
	try := func(tf *TeamFile) (teamHit, gitignore.MatchResult) {
		if tf.Format != f {
			return teamHit{}, gitignore.NoMatch
		}
		// With negation the last matching line decides; in a file of
		// denies only, any does, and the first is the one to name.
		n := len(tf.rules)
		for k := range n {
			i := n - 1 - k
			if tf.Format.syn != gitignoreSyntax {
				i = k
			}
			r := &tf.rules[i]
			if m := r.match(tf, v, isDir); m != gitignore.NoMatch {
				return teamHit{tf, r}, m
			}
		}
		return teamHit{}, gitignore.NoMatch
	}
	for _, e := range ch.dirs {
		for _, tf := range e.files {
			if h, m := try(tf); m != gitignore.NoMatch {
				return h, m
			}
		}
	}
	for _, tf := range ch.glob.files {
		if h, m := try(tf); m != gitignore.NoMatch {
			return h, m
		}
	}
	return teamHit{}, gitignore.NoMatch
}

func (r *teamRule) match(tf *TeamFile, v *pathView, isDir bool) gitignore.MatchResult {
	if r.all {
		if tf.governs(v.path) {
			return gitignore.Exclude
		}
		return gitignore.NoMatch
	}
	if r.literal != "" && !strings.Contains(v.path, r.literal) {
		return gitignore.NoMatch
	}
	comps := v.components()
	if r.project {
		if !v.hasRoot {
			return r.loose.Match(comps, isDir)
		}
		if len(comps) <= v.rootLen {
			return gitignore.NoMatch
		}
		return r.pats[0].Match(comps[v.rootLen:], isDir)
	}
	for _, p := range r.pats {
		if m := p.Match(comps, isDir); m != gitignore.NoMatch {
			return m
		}
	}
	return gitignore.NoMatch
}

// governs reports whether path is below the file's scope (a global file
// governs every path).
func (tf *TeamFile) governs(path string) bool {
	if tf.Scope == "" {
		return true
	}
	for _, s := range tf.scopes {
		if strings.HasPrefix(path, s) && len(path) > len(s) && (s == "/" || path[len(s)] == '/') {
			return true
		}
	}
	return false
}

// TeamReport is what deny_files finds for one folder: its repository root,
// the team files that govern its paths (globals first, then from the root
// down) and the folders that could not be looked in.
type TeamReport struct {
	Dir      string
	Root     string // "" when the folder is in no repository
	Files    []*TeamFile
	Problems []string
}

// TeamFiles reports what deny_files finds for paths in dir, for every format
// (whether or not a tier names it).
func (p *Policy) TeamFiles(dir string) TeamReport {
	c := p.team
	if c == nil || len(c.formats) != len(TeamFormats) {
		c = newTeamCache(TeamFormats, p.env)
	}
	abs, err := absolute(dir)
	if err != nil {
		return TeamReport{Dir: dir, Problems: []string{err.Error()}}
	}
	abs = filepath.Clean(abs)
	ch := c.chainOf(filepath.Join(abs, "x"))
	r := TeamReport{Dir: abs, Root: ch.root()}
	r.Files = append(r.Files, ch.glob.files...)
	for i := len(ch.dirs) - 1; i >= 0; i-- {
		e := ch.dirs[i]
		r.Files = append(r.Files, e.files...)
		if e.problem != "" {
			r.Problems = append(r.Problems, e.problem)
		}
	}
	return r
}
