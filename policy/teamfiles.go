package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// Team files are the ignore files other assistants read, and Claude Code's
// permissions.deny Read rules: what a team has already written down about
// what may reach a model. A tier that names them in deny_files adds their
// patterns to its deny list. Each file is translated once, when a decision
// first needs it (teamcache.go finds and re-reads them).

// syntax is how a team file is read.
type syntax int

const (
	gitignoreSyntax syntax = iota // gitignore: per-folder anchoring, ! negation
	aiexcludeSyntax               // gitignore without negation; an empty file denies all below it
	claudeSyntax                  // settings.json: permissions.deny "Read(…)" rules
)

// TeamFormat is one kind of team file.
type TeamFormat struct {
	Name string // as deny_files names it
	Tool string // who reads it
	syn  syntax
	// inDir are the files looked up in each folder, slash-separated and
	// relative to it; home are global files under the home folder; system
	// global files at fixed paths.
	inDir  []string
	home   []string
	system []string
	mask   uint16 // its bit in a tier's mask of formats: set by init
}

// TeamFormats are the formats deny_files knows, in the order "*" lists them.
var TeamFormats = []*TeamFormat{
	{Name: ".cursorignore", Tool: "Cursor", inDir: []string{".cursorignore"}},
	{Name: ".aiignore", Tool: "JetBrains AI Assistant", inDir: []string{".aiignore"}},
	{Name: ".aiexclude", Tool: "Gemini Code Assist, Android Studio", syn: aiexcludeSyntax, inDir: []string{".aiexclude"}},
	{Name: ".geminiignore", Tool: "Gemini CLI", inDir: []string{".geminiignore"}},
	{Name: ".codeiumignore", Tool: "Windsurf", inDir: []string{".codeiumignore"}, home: []string{".codeium/.codeiumignore"}},
	{Name: ".aiderignore", Tool: "aider", inDir: []string{".aiderignore"}},
	{Name: ".continueignore", Tool: "Continue", inDir: []string{".continueignore"}, home: []string{".continue/.continueignore"}},
	{Name: ".crushignore", Tool: "Crush", inDir: []string{".crushignore"}},
	{Name: ".clineignore", Tool: "Cline", inDir: []string{".clineignore"}},
	{Name: ".claude/settings.json", Tool: "Claude Code", syn: claudeSyntax,
		inDir:  []string{".claude/settings.json", ".claude/settings.local.json"},
		home:   []string{".claude/settings.json"},
		system: []string{"/etc/claude-code/managed-settings.json", "/Library/Application Support/ClaudeCode/managed-settings.json"}},
}

func init() {
	for i, f := range TeamFormats {
		f.mask = 1 << i
	}
}

func teamFormat(name string) *TeamFormat {
	for _, f := range TeamFormats {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// maxTeamFile bounds what is read of one team file; a bigger one is not an
// ignore file and denies its scope.
const maxTeamFile = 1 << 20

// TeamFile is one team file as scrim translated it.
type TeamFile struct {
	Path   string
	Format *TeamFormat
	// Scope is the folder whose paths it governs; "" for a global file,
	// which governs every path (its relative patterns are relative to the
	// path's repository root).
	Scope string
	// Problem says why the file could not be read or parsed; everything in
	// its scope is then denied.
	Problem string
	Notes   []TeamNote // lines not translated exactly
	rules   []teamRule
	scopes  []string // Scope as given and resolved
	dirOnly bool     // some rule matches folders only
}

// Rules is how many lines became rules.
func (tf *TeamFile) Rules() int { return len(tf.rules) }

// TeamNote is a line scrim could not translate exactly, and how it was treated.
type TeamNote struct {
	Line    int
	Raw     string
	Why     string
	Treated string
}

// teamRule is one translated line.
type teamRule struct {
	line   int
	raw    string // as written
	negate bool
	// all: the rule matches everything below its scope (an empty .aiexclude,
	// a bare Read rule, an unreadable file, a line that cannot be translated).
	all bool
	// pats are go-git patterns with their domain set (one per form of the
	// folder it is anchored at). project rules are instead relative to the
	// repository root of each path: pats have no domain and are matched
	// against the path below that root, loose (the pattern at any depth)
	// for a path in no repository.
	pats    []gitignore.Pattern
	project bool
	loose   gitignore.Pattern
	// literal is text every path the rule matches contains: most paths are
	// rejected by a strings.Contains before go-git splits anything.
	literal string
	dirOnly bool
	reason  string
}

// anchor is where a rule's patterns are relative to: one or more forms of a
// folder (as given and with symlinks resolved), or the repository root of
// each path when project is set.
type anchor struct {
	dirs    []string
	project bool
}

// readTeamFile reads and translates the team file at path. scope is the
// folder it governs ("" for a global file); home is the home folder (for ~
// in Claude rules, and the root of the user's Claude settings).
func readTeamFile(path string, f *TeamFormat, scope string, global bool, home string) *TeamFile {
	tf := &TeamFile{Path: path, Format: f, Scope: scope, scopes: forms(scope)}
	defer tf.setReasons()
	data, err := readBounded(path)
	if err != nil {
		tf.fail(fmt.Sprintf("cannot read %s: %v", path, plainErr(err)))
		return tf
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	dir := anchor{dirs: tf.scopes, project: global}
	switch f.syn {
	case claudeSyntax:
		root := scope
		if global && strings.HasPrefix(path, home+"/") {
			root = home // ~/.claude/settings.json: / is the folder holding .claude
		}
		tf.claude(data, root, home, global)
	default:
		tf.ignoreLines(data, dir)
	}
	for _, r := range tf.rules {
		tf.dirOnly = tf.dirOnly || r.dirOnly
	}
	return tf
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTeamFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxTeamFile {
		return nil, fmt.Errorf("larger than %d MiB: not a team file", maxTeamFile>>20)
	}
	return data, nil
}

// plainErr drops the "open PATH:" that os errors repeat.
func plainErr(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// setReasons words, once, what each rule says when it denies: deciding
// must not allocate.
func (tf *TeamFile) setReasons() {
	below := "every path"
	if tf.Scope != "" {
		below = "everything below " + tf.Scope
	}
	for i := range tf.rules {
		r := &tf.rules[i]
		switch {
		case tf.Problem != "":
			r.reason = tf.Problem + "; " + below + " is denied (fail closed)"
		case r.all && r.line == 0:
			r.reason = fmt.Sprintf("denied by %s %s: %s", tf.Path, r.raw, below)
		case r.all && r.raw == "Read":
			r.reason = fmt.Sprintf("denied by %s:%d (%s): every read, %s", tf.Path, r.line, r.raw, below)
		case r.all:
			r.reason = fmt.Sprintf("denied by %s:%d (%s): a line scrim cannot translate exactly denies %s (fail closed)", tf.Path, r.line, r.raw, below)
		default:
			r.reason = fmt.Sprintf("denied by %s:%d (%s)", tf.Path, r.line, r.raw)
		}
	}
}

// fail makes the whole file one rule that denies everything in its scope.
func (tf *TeamFile) fail(why string) {
	tf.Problem = why
	tf.rules = []teamRule{{all: true}}
}

// forms is dir as given and, when symlinks lead elsewhere, resolved: the
// paths decided come in both forms.
func forms(dir string) []string {
	if dir == "" {
		return nil
	}
	out := []string{dir}
	if c, err := Canonical(dir); err == nil && c != dir {
		out = append(out, c)
	}
	return out
}

// ignoreLines reads gitignore-syntax lines (both ignore syntaxes).
func (tf *TeamFile) ignoreLines(data []byte, at anchor) {
	aiexclude := tf.Format.syn == aiexcludeSyntax
	patterns := 0
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		patterns++
		negate := strings.HasPrefix(line, "!")
		body := line
		if negate {
			body = line[1:]
			if aiexclude {
				// .aiexclude has no negation. Denying what the line names is
				// the reading that lets nothing through.
				negate = false
				tf.Notes = append(tf.Notes, TeamNote{Line: n, Raw: line,
					Why:     ".aiexclude has no ! negation",
					Treated: "read as a deny of " + body + " (fail closed)"})
			}
		}
		tf.addRule(n, line, body, negate, at)
	}
	if aiexclude && patterns == 0 {
		// An empty .aiexclude blocks everything below its folder.
		tf.rules = append(tf.rules, teamRule{all: true, raw: "(empty .aiexclude)"})
	}
}

// addRule translates one gitignore pattern (body, without its !) anchored at
// at; a pattern it cannot translate exactly denies all of the file's scope.
func (tf *TeamFile) addRule(line int, raw, body string, negate bool, at anchor) {
	pat, err := gitDialect(body)
	if err != nil {
		tf.Notes = append(tf.Notes, TeamNote{Line: line, Raw: raw, Why: err.Error(),
			Treated: "denies everything " + tf.scopeWords() + " (fail closed)"})
		tf.rules = append(tf.rules, teamRule{line: line, raw: raw, all: true})
		return
	}
	r := teamRule{line: line, raw: raw, negate: negate, project: at.project,
		literal: literalRun(pat), dirOnly: strings.HasSuffix(strings.TrimRight(pat, " "), "/")}
	text := pat
	if negate {
		text = "!" + pat
	}
	if at.project {
		r.pats = []gitignore.Pattern{gitignore.ParsePattern(text, nil)}
		r.loose = gitignore.ParsePattern(loosen(text), nil)
	}
	for _, d := range at.dirs {
		r.pats = append(r.pats, gitignore.ParsePattern(text, components(d)))
	}
	tf.rules = append(tf.rules, r)
}

func (tf *TeamFile) scopeWords() string {
	if tf.Scope == "" {
		return "(a global file)"
	}
	return "below " + tf.Scope
}

// loosen makes a pattern anchored at a repository root match at any depth:
// what a root-relative rule means for a path in no repository is not known,
// so it is read the widest way.
func loosen(text string) string {
	neg := strings.HasPrefix(text, "!")
	body := strings.TrimPrefix(text, "!")
	if !strings.HasPrefix(body, "**/") {
		body = "**/" + strings.TrimPrefix(body, "/")
	}
	if neg {
		return "!" + body
	}
	return body
}

// components splits an absolute folder into go-git's path components.
func components(dir string) []string {
	dir = strings.Trim(filepath.ToSlash(dir), "/")
	if dir == "" {
		return nil
	}
	return strings.Split(dir, "/")
}

// gitDialect rewrites a gitignore pattern into what go-git's matcher means
// by the same text, or says why that cannot be done exactly. go-git matches
// each component with filepath.Match, which differs from git's fnmatch in
// three ways handled here: "[!…]" is "[^…]" to Go; POSIX classes
// ("[[:alpha:]]") do not exist in Go; and "**" next to other characters,
// which git reads as "*", makes go-git's glob match nothing.
func gitDialect(p string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch c {
		case '\\':
			if i+1 >= len(p) {
				return "", errors.New(`a trailing \ escapes nothing (git ignores such a line; scrim cannot tell what was meant)`)
			}
			b.WriteByte(c)
			b.WriteByte(p[i+1])
			i++
		case '[':
			end, class, err := bracket(p[i:])
			if err != nil {
				return "", err
			}
			b.WriteString(class)
			i += end - 1
		default:
			b.WriteByte(c)
		}
	}
	out := b.String()
	comps := strings.Split(out, "/")
	for i, comp := range comps {
		if comp != "**" && strings.Contains(comp, "**") {
			for strings.Contains(comp, "**") {
				comp = strings.ReplaceAll(comp, "**", "*")
			}
			comps[i] = comp
		}
		if _, err := filepath.Match(comp, ""); err != nil {
			return "", fmt.Errorf("%q is not a pattern go-git can match (%v)", comp, err)
		}
	}
	return strings.Join(comps, "/"), nil
}

// bracket reads the bracket expression at the start of s and returns its
// length and its Go form.
func bracket(s string) (int, string, error) {
	i := 1
	var b strings.Builder
	b.WriteByte('[')
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		b.WriteByte('^')
		i++
	}
	first := true
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ']' && !first:
			b.WriteByte(']')
			return i + 1, b.String(), nil
		case c == '[' && i+1 < len(s) && (s[i+1] == ':' || s[i+1] == '=' || s[i+1] == '.'):
			return 0, "", errors.New("POSIX character classes ([[:alpha:]] and the like) have no equivalent in go-git's matcher")
		case c == '\\' && i+1 < len(s):
			b.WriteByte(c)
			b.WriteByte(s[i+1])
			i++
		case c == '/':
			return 0, "", errors.New("a [ with no closing ] before the next /")
		default:
			b.WriteByte(c)
		}
		first = false
	}
	return 0, "", errors.New("a [ with no closing ]")
}

// literalRun is the longest run of plain characters in a pattern, outside
// bracket expressions: every path the pattern matches contains it.
func literalRun(p string) string {
	p = strings.TrimSuffix(strings.TrimRight(p, " "), "/")
	best, cur := "", strings.Builder{}
	flush := func() {
		if cur.Len() > len(best) {
			best = cur.String()
		}
		cur.Reset()
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*', '?':
			flush()
		case '\\':
			flush()
			i++ // the escaped character starts no run: keep it simple
		case '[':
			flush()
			if end, _, err := bracket(p[i:]); err == nil {
				i += end - 1
			}
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	if best == "/" {
		return ""
	}
	return strings.TrimPrefix(best, "/")
}

// claude reads the permissions.deny Read rules of a Claude Code settings
// file. root is what a rule's leading / is relative to ("" in a managed
// file: the repository root of each path). Claude Code's four anchors:
// //abs is from the filesystem root, ~/x from the home folder, /x from the
// settings' root, and x or ./x from the working folder, which is the
// project folder for a project's settings and unknown (so: each path's
// repository root) for the user's and managed ones.
func (tf *TeamFile) claude(data []byte, root, home string, global bool) {
	var doc struct {
		Permissions *struct {
			Deny []json.RawMessage `json:"deny"`
		} `json:"permissions"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		tf.fail(fmt.Sprintf("cannot parse %s: %v", tf.Path, err))
		return
	}
	if doc.Permissions == nil {
		return
	}
	lines := denyLines(data)
	cwd := anchor{dirs: forms(root), project: global}
	if global {
		cwd = anchor{project: true}
	}
	for i, raw := range doc.Permissions.Deny {
		line := 0
		if i < len(lines) {
			line = lines[i]
		}
		var rule string
		if json.Unmarshal(raw, &rule) != nil {
			continue // not a string: Claude Code rejects it too; it denies nothing
		}
		rule = strings.TrimSpace(rule)
		spec, isRead := readSpec(rule)
		if !isRead {
			continue // Bash(…), Edit(…), WebFetch…: not about reading files
		}
		switch {
		case spec == "" || spec == "*" || spec == "**" || spec == "/**" || spec == "./**":
			tf.rules = append(tf.rules, teamRule{line: line, raw: rule, all: true})
		case strings.HasPrefix(spec, "//"):
			tf.addRule(line, rule, spec[1:], false, anchor{dirs: []string{"/"}})
		case strings.HasPrefix(spec, "~/"):
			if home == "" {
				tf.untranslated(line, rule, "~ needs a home folder and there is none")
				continue
			}
			tf.addRule(line, rule, "/"+spec[2:], false, anchor{dirs: forms(home)})
		case strings.HasPrefix(spec, "~"):
			tf.untranslated(line, rule, "~user is not a form Claude Code documents")
		case strings.HasPrefix(spec, "/"):
			if global && root != home {
				tf.addRule(line, rule, spec, false, anchor{project: true})
			} else {
				tf.addRule(line, rule, spec, false, anchor{dirs: forms(root)})
			}
		case strings.HasPrefix(spec, "../") || spec == "..":
			if global {
				tf.untranslated(line, rule, "a path above the working folder, which a user or managed setting does not know")
				continue
			}
			tf.addRule(line, rule, "/"+strings.TrimPrefix(filepath.ToSlash(filepath.Clean(filepath.Join(root, spec))), "/"), false, anchor{dirs: []string{"/"}})
		default:
			// x and ./x: relative to the working folder, as in gitignore
			// (a name with no slash matches at any depth below it).
			tf.addRule(line, rule, strings.TrimPrefix(spec, "./"), false, cwd)
		}
	}
}

// untranslated notes a rule that cannot be translated and makes it deny all.
func (tf *TeamFile) untranslated(line int, raw, why string) {
	tf.Notes = append(tf.Notes, TeamNote{Line: line, Raw: raw, Why: why, Treated: "denies everything " + tf.scopeWords() + " (fail closed)"})
	tf.rules = append(tf.rules, teamRule{line: line, raw: raw, all: true})
}

// readSpec returns what is inside Read(…), and whether rule is a Read rule
// at all; a bare "Read" is every read.
func readSpec(rule string) (string, bool) {
	if rule == "Read" {
		return "", true
	}
	if strings.HasPrefix(rule, "Read(") && strings.HasSuffix(rule, ")") {
		return strings.TrimSpace(rule[len("Read(") : len(rule)-1]), true
	}
	return "", false
}

// denyLines finds the line of each element of permissions.deny, in order,
// by walking the JSON tokens (the decoder knows offsets, not lines).
func denyLines(data []byte) []int {
	type frame struct {
		obj     bool
		key     string // the key whose value is being read
		wantKey bool
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []frame
	var out []int
	inDeny := func() bool {
		return len(stack) == 3 && stack[0].obj && stack[0].key == "permissions" &&
			stack[1].obj && stack[1].key == "deny" && !stack[2].obj
	}
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
			if k, ok := tok.(string); ok {
				stack[n-1].key, stack[n-1].wantKey = k, false
				continue
			}
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
		} else {
			if inDeny() {
				start := before + int64(bytes.IndexAny(data[before:], "\"{[0123456789-tfn"))
				out = append(out, 1+bytes.Count(data[:start], []byte{'\n'}))
			}
			if ok && (d == '{' || d == '[') {
				stack = append(stack, frame{obj: d == '{', wantKey: d == '{'})
				continue
			}
		}
		if n := len(stack); n > 0 && stack[n-1].obj {
			stack[n-1].wantKey = true
		}
	}
}
