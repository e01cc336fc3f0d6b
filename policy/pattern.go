package policy

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/scrim-dev/scrim/internal/userdirs"
)

// globMeta are the characters doublestar gives a meaning. ']' and '}' alone are
// literal to doublestar, but treating them as meta only shortens a literal
// prefix, which is always safe.
const globMeta = `*?[]{}\`

// Pattern is one read or deny glob. Raw is as written; forms are what paths
// are matched against: the expanded pattern and, when its literal prefix runs
// through a symlink, the same pattern on the resolved prefix.
type Pattern struct {
	Raw    string
	Line   int
	forms  []form
	lower  []form // forms lower-cased, for deny patterns where foldDeny is on
	reason string // built once: deciding must not allocate
}

type form struct {
	glob   string
	prefix string // literal, glob-free prefix; a path that lacks it cannot match
	suffix string // literal tail after the last glob character; same use
	needle string // literal text every match contains ("**/secrets/**" → "secrets")
}

// newForm fills in the fast-reject fields of a glob.
func newForm(glob, prefix string) form {
	return form{glob: glob, prefix: prefix, suffix: literalSuffix(glob), needle: needle(glob)}
}

func (p Pattern) match(path string) bool { return matchForms(p.forms, path) }

func matchForms(forms []form, path string) bool {
	for _, f := range forms {
		if !strings.HasPrefix(path, f.prefix) || !strings.HasSuffix(path, f.suffix) || !strings.Contains(path, f.needle) {
			continue
		}
		if ok, _ := doublestar.Match(f.glob, path); ok {
			return true
		}
	}
	return false
}

// Expanded returns the absolute glob(s) the pattern matches against.
func (p Pattern) Expanded() []string {
	out := make([]string, len(p.forms))
	for i, f := range p.forms {
		out[i] = f.glob
	}
	return out
}

// compilePattern expands raw (~, $VAR from env, relative to baseDir) into an absolute
// glob and adds the form with its literal prefix canonicalised. Expanded text
// is escaped: a home folder or variable value is a path, never a glob.
func compilePattern(raw, baseDir string, env userdirs.Lookup) (Pattern, error) {
	if strings.TrimSpace(raw) == "" {
		return Pattern{}, errors.New("empty pattern")
	}
	s, err := expandVars(raw, env)
	if err != nil {
		return Pattern{}, err
	}
	switch {
	case s == "~" || strings.HasPrefix(s, "~/"):
		home, err := userdirs.Home(env)
		if err != nil || !filepath.IsAbs(home) {
			return Pattern{}, fmt.Errorf("cannot expand ~: no home folder (%v)", err)
		}
		s = escapeMeta(home) + s[1:]
	case strings.HasPrefix(s, "~"):
		return Pattern{}, errors.New("~user is not supported; write the folder out")
	case strings.HasPrefix(s, "**"):
		// Matches at any depth anywhere: not relative to anything.
		if !doublestar.ValidatePattern(s) {
			return Pattern{}, errInvalidGlob
		}
		forms := []form{newForm(s, "")}
		return Pattern{Raw: raw, forms: forms, lower: lowerForms(forms)}, nil
	case !filepath.IsAbs(s) && !drivePattern(s):
		if baseDir == "" {
			return Pattern{}, errors.New("relative pattern in a policy that has no folder; start it with /, ~ or **")
		}
		s = escapeMeta(baseDir) + "/" + s
	}
	if _, ok := DrivePath(s); ok && drivePattern(s) {
		s = strings.ToUpper(s[:1]) + s[1:] // a Windows drive, as paths from Windows are recorded
	}
	trailing := strings.HasSuffix(s, "/") && len(s) > 1
	s = filepath.Clean(s)
	if trailing && s != "/" {
		s += "/**" // "dir/" means the folder and everything in it
	}
	if !doublestar.ValidatePattern(s) {
		return Pattern{}, errInvalidGlob
	}
	prefix, rest := splitLiteral(s)
	p := Pattern{Raw: raw, forms: []form{newForm(s, prefix)}}
	if canon, err := Canonical(prefix); err == nil && canon != prefix {
		g := escapeMeta(canon)
		if rest != "" {
			g = strings.TrimSuffix(g, "/") + "/" + rest
		}
		p.forms = append(p.forms, newForm(g, canon))
	}
	p.lower = lowerForms(p.forms)
	return p, nil
}

// drivePattern reports whether s starts with a Windows drive written with a
// forward slash ("C:/Users/**", or any drive: "?:/**"): a backslash in a
// pattern is an escape, so patterns for Windows paths are written with
// forward slashes.
func drivePattern(s string) bool {
	i := strings.Index(s, ":/")
	if i <= 0 || strings.ContainsRune(s[:i], '/') {
		return false
	}
	d := s[:i]
	if _, ok := DrivePath(s); ok {
		return true
	}
	return d == "?" || d == "*" || strings.HasPrefix(d, "[") && strings.HasSuffix(d, "]")
}

var errInvalidGlob = errors.New("invalid glob: an unclosed [ or {, or a \\ at the end (write \\[ for a literal [)")

// expandVars replaces $NAME and ${NAME}. An unset or empty variable is an
// error: "$PROJECT/**" silently becoming "/**" would open everything. A `$`
// that starts no name must be written `\$` (a literal $ to the glob).
func expandVars(s string, env userdirs.Lookup) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			b.WriteByte(c)
			b.WriteByte(s[i+1])
			i++
			continue
		}
		if c != '$' {
			b.WriteByte(c)
			continue
		}
		name, width := varName(s[i+1:])
		if name == "" {
			return "", errors.New("$ must start a variable name ($NAME or ${NAME}); write \\$ for a literal $")
		}
		v, ok := env(name)
		if !ok {
			return "", fmt.Errorf("environment variable $%s is not set; set it or write the path out", name)
		}
		if v == "" {
			return "", fmt.Errorf("environment variable $%s is empty; set it or write the path out", name)
		}
		b.WriteString(escapeMeta(v))
		i += width
	}
	return b.String(), nil
}

// varName reads NAME or {NAME} at the start of s and returns the name and how
// many bytes it took; "" if s starts no valid name.
func varName(s string) (string, int) {
	if strings.HasPrefix(s, "{") {
		end := strings.IndexByte(s, '}')
		if end < 0 || !isName(s[1:end]) {
			return "", 0
		}
		return s[1:end], end + 1
	}
	n := 0
	for n < len(s) && isNameByte(s[n], n == 0) {
		n++
	}
	return s[:n], n
}

func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i], i == 0) {
			return false
		}
	}
	return s != ""
}

func isNameByte(c byte, first bool) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || !first && '0' <= c && c <= '9'
}

// splitLiteral splits an absolute glob into its glob-free leading folders
// (unescaped) and the rest: "/home/u/src/**/*.go" → "/home/u/src", "**/*.go".
func splitLiteral(glob string) (prefix, rest string) {
	comps := strings.Split(glob, "/")
	lit := make([]string, 0, len(comps))
	i := 0
	for ; i < len(comps); i++ {
		u, ok := unescapeLiteral(comps[i])
		if !ok {
			break
		}
		lit = append(lit, u)
	}
	prefix = strings.Join(lit, "/")
	if prefix == "" && i > 0 {
		prefix = "/" // "/" alone; a glob drive ("?:/**") has no literal prefix
	}
	return prefix, strings.Join(comps[i:], "/")
}

// unescapeLiteral returns the text a glob component matches if it is literal:
// no glob characters except escaped ones.
func unescapeLiteral(comp string) (string, bool) {
	if !strings.ContainsAny(comp, globMeta) {
		return comp, true
	}
	var b strings.Builder
	for i := 0; i < len(comp); i++ {
		c := comp[i]
		if c == '\\' && i+1 < len(comp) {
			b.WriteByte(comp[i+1])
			i++
			continue
		}
		if strings.IndexByte(globMeta, c) >= 0 {
			return "", false
		}
		b.WriteByte(c)
	}
	return b.String(), true
}

// literalSuffix is the tail after the glob's last special character: every
// path the glob matches ends with it ("**/*.pem" → ".pem"). Escapes count as
// special so that the suffix never needs unescaping.
func literalSuffix(glob string) string {
	i := strings.LastIndexAny(glob, globMeta)
	if i < 0 {
		return "" // fully literal: the prefix already covers it
	}
	return glob[i+1:]
}

// needle is the longest run of literal text in glob that every match must
// contain, "" if there is none worth checking. Runs stop at any glob
// character, and nothing after the first [ or { counts (classes and
// alternatives are not parsed here). The slash next to a "**" can vanish
// ("dir/**" matches "dir"), so runs lose their end slashes: any part of a
// required run is still required.
func needle(glob string) string {
	if i := strings.IndexAny(glob, "[{"); i >= 0 {
		glob = glob[:i]
	}
	best := ""
	for _, run := range strings.FieldsFunc(glob, func(r rune) bool { return r == '*' || r == '?' || r == '\\' }) {
		if run = strings.Trim(run, "/"); len(run) > len(best) {
			best = run
		}
	}
	if len(best) < 2 {
		return ""
	}
	return best
}

func escapeMeta(s string) string {
	if !strings.ContainsAny(s, globMeta) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(globMeta, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
