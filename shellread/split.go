package shellread

import (
	"os"
	"strings"
)

// style is how an output's lines name the files they come from.
type style int

const (
	linePrefix   style = iota // grep, rg: name:N:text, name-N-text, name:text, name:N (counts)
	blockHeading              // rg --heading: a name alone, then N:text lines, a blank line between files
	fileHeaders               // head, tail of several files: "==> name <=="
	diffHeaders               // diff --git a/x b/x, or --- x / +++ y
	nameList                  // grep -l, rg -l: one name a line
)

// naming says how a command's output names its files: what it searched,
// and the options that decide how names are printed.
type naming struct {
	style style
	dir   string   // names resolve against it
	files []string // names the command was given: they print as given
	forms []string // their canonical forms
	roots []string // folders searched, as given; "" is the folder itself, whose files print bare
	// single: the one operand may be a file, which prints no names; when no
	// line names a file, the output is that file's.
	single                 bool
	numbered, nul, context bool
	git                    bool // diff names carry a/ and b/ and are relative to dir
}

// Search describes the output of a grep-like search made by a tool whose
// parameters are known (Claude Code's Grep), so that SplitSearch can cut it
// into pieces per file.
type Search struct {
	Dir      string   // relative names resolve against it
	Roots    []string // what was searched, as names in the output start ("" for bare relative names)
	Numbered bool     // name:N:text and name-N-text lines
	Context  bool     // context lines may be present
	List     bool     // one name a line
}

// SplitSearch cuts a search's output into one piece per run of lines of one
// file. It returns the canonical forms of every file named (the parts'
// files first) and false when no line names a file.
func SplitSearch(out string, s Search, res Resolver) ([]Part, []string, bool) {
	if res == nil {
		res = Resolve
	}
	n := &naming{style: linePrefix, dir: s.Dir, roots: s.Roots, numbered: s.Numbered, context: s.Context}
	if s.List {
		n.style = nameList
	}
	return n.split(out, res)
}

// lines cuts s into lines that keep their "\n", so that they join back to s.
func lines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// plainLine is a line as its names are read: without its line end and
// without colour escapes (grep --color=always).
func plainLine(s string) string {
	s = strings.TrimRight(s, "\r\n")
	if strings.IndexByte(s, 0x1b) < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';') {
				j++
			}
			if j < len(s) && (s[j] == 'm' || s[j] == 'K') {
				i = j
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// split cuts out into pieces per file. files are the canonical forms of
// every file named; ok is false when no line names one.
func (n *naming) split(out string, res Resolver) (parts []Part, files []string, ok bool) {
	ls := lines(out)
	plain := make([]string, len(ls))
	for i, l := range ls {
		plain[i] = plainLine(l)
	}
	var names, doubt []string
	switch n.style {
	case fileHeaders:
		names = n.headerNames(plain)
	case diffHeaders:
		names = n.diffNames(plain)
	case blockHeading:
		names = n.headingNames(plain)
	case nameList:
		names = n.listNames(plain)
	default:
		names, doubt = n.prefixNames(plain)
	}
	first := ""
	for _, nm := range names {
		if nm != "" {
			first = nm
			break
		}
	}
	if first == "" {
		return nil, nil, false
	}
	// Each name is resolved once; its other forms are kept for the end.
	var extra []string
	canon := make(map[string]string, 16)
	resolve := func(name string) string {
		if c, ok := canon[name]; ok {
			return c
		}
		forms := res(strings.TrimRight(name, "\r"), n.dir)
		c := ""
		if len(forms) > 0 {
			c = forms[0]
			extra = append(extra, forms[1:]...)
		}
		canon[name] = c
		return c
	}
	// Parts are cut from out itself: lines are contiguous in it.
	cur := resolve(first)
	if cur == "" {
		return nil, nil, false
	}
	start, off := 0, 0
	for i, l := range ls {
		if nm := names[i]; nm != "" {
			c := resolve(nm)
			if c == "" {
				return nil, nil, false // a name that cannot be resolved
			}
			if c != cur {
				if off > start {
					parts = append(parts, Part{Text: out[start:off], File: cur})
				}
				start, cur = off, c
			}
		}
		off += len(l)
	}
	if off > start {
		parts = append(parts, Part{Text: out[start:off], File: cur})
	}
	for _, d := range doubt {
		extra = append(extra, res(d, n.dir)...) // what a line may be from
	}
	// The parts' files first, in order, then the other forms.
	ordered := pathSet{seen: make(map[string]bool, len(canon)+len(extra))}
	for _, p := range parts {
		ordered.add(p.File)
	}
	ordered.add(extra...)
	return parts, ordered.list, true
}

// under reports whether name can be a name this search prints: one of the
// files it was given, or a name under a folder it searched.
func (n *naming) under(name string) bool {
	if name == "" {
		return false
	}
	for _, f := range n.files {
		if name == f {
			return true
		}
	}
	for _, r := range n.roots {
		if r == "" {
			if name[0] != '/' && name[0] != ' ' && name[0] != '-' && name[0] != '\t' {
				if _, isDrive := drive(name); !isDrive {
					return true
				}
			}
			continue
		}
		r = strings.TrimRight(r, `/\`)
		if r == "" {
			r = "/"
		}
		if name == r || strings.HasPrefix(name, r) && (r == "/" || len(name) > len(r) && (name[len(r)] == '/' || name[len(r)] == '\\')) {
			return true
		}
	}
	return false
}

func (n *naming) sep() byte {
	if n.nul {
		return 0
	}
	return ':'
}

// start is where a name's separators may begin: after a Windows drive's
// colon.
func start(s string) int {
	if _, ok := drive(s); ok {
		return 2
	}
	return 1
}

// matchName reads the name of a match line: "name:N:text" when numbered,
// "name:text" (or "name:N", a count) when not. "" when s is not one.
func (n *naming) matchName(s string) string {
	sep := n.sep()
	for i := start(s); i < len(s) && i < 4096; i++ {
		if s[i] != sep {
			continue
		}
		name := s[:i]
		if n.numbered && !n.nul {
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j == i+1 || j >= len(s) || s[j] != ':' {
				continue
			}
		}
		if n.under(name) {
			return name
		}
		if n.nul {
			return ""
		}
	}
	return ""
}

// contextNames reads the possible names of a numbered context line,
// "name-N-text": every prefix followed by -digits- that can be a name.
func (n *naming) contextNames(s string) []string {
	var out []string
	for i := start(s); i < len(s) && i < 4096; i++ {
		if s[i] != '-' {
			continue
		}
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j > i+1 && j < len(s) && s[j] == '-' && n.under(s[:i]) {
			out = append(out, s[:i])
		}
	}
	return out
}

// prefixNames names each line of grep-style output. Names are learnt from
// the match lines first ('-' is too common in names to tell where a
// context line's name ends); a line then belongs to the longest name it
// starts with. A numbered context line whose match line is not in the
// output (cut off by head) names its file itself; any other line belongs
// to the file before it.
func (n *naming) prefixNames(plain []string) (names, doubt []string) {
	known := map[string]bool{}
	for _, f := range n.files {
		known[f] = true
	}
	for _, s := range plain {
		if nm := n.matchName(s); nm != "" {
			known[nm] = true
		}
	}
	// "a.go-7-src/b.go:3:x" is a context line of a.go whose text looks like
	// a match line, not a match line of a file named "a.go-7-src/b.go":
	// a name that extends another by a context separator ("-7-", or "-"
	// without line numbers) is dropped unless a file of that name exists.
	// When neither name is seen elsewhere nor exists, the longer is kept
	// and the shorter is in doubt: the content may be its file's.
	for nm := range known {
		if !n.context {
			break // no context lines: '-' separates nothing
		}
		for _, k := range contextPrefixes(nm, n.numbered) {
			if !n.under(k) || n.exists(nm) {
				continue
			}
			if known[k] || n.exists(k) {
				delete(known, nm)
				break
			}
			doubt = append(doubt, k)
		}
	}
	sep := n.sep()
	out := make([]string, len(plain))
	for i, s := range plain {
		// The longest known name the line starts with: names end where a
		// separator follows, so only those places are looked up.
		best := ""
		if known[s] {
			best = s
		}
		for j := start(s); j < len(s) && j < 4096 && best != s; j++ {
			if c := s[j]; (c == sep || c == '-' || c == 0 || c == ':') && known[s[:j]] {
				best = s[:j]
			}
		}
		if best == "" && n.numbered {
			if cands := n.contextNames(s); len(cands) > 0 {
				best = cands[len(cands)-1]
				for _, c := range cands {
					if n.exists(c) {
						best = c
					}
				}
				known[best] = true
			}
		}
		out[i] = best
	}
	return out, doubt
}

// contextPrefixes are the names a context line "name-N-text" (or
// "name-text" without line numbers) can start with, within s.
func contextPrefixes(s string, numbered bool) []string {
	var out []string
	for i := 1; i < len(s); i++ {
		if s[i] != '-' {
			continue
		}
		if !numbered {
			out = append(out, s[:i])
			continue
		}
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j > i+1 && j < len(s) && s[j] == '-' {
			out = append(out, s[:i])
		}
	}
	return out
}

// exists reports whether name is a file here (disambiguating names only).
func (n *naming) exists(name string) bool {
	if n.dir == "" && !strings.HasPrefix(name, "/") {
		return false
	}
	p := name
	if !strings.HasPrefix(name, "/") {
		p = n.dir + "/" + name
	}
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

func (n *naming) listNames(plain []string) []string {
	out := make([]string, len(plain))
	for i, s := range plain {
		s = strings.TrimRight(s, "\x00")
		if n.under(s) {
			out[i] = s
		}
	}
	return out
}

func (n *naming) headerNames(plain []string) []string {
	out := make([]string, len(plain))
	for i, s := range plain {
		if len(s) >= 8 && strings.HasPrefix(s, "==> ") && strings.HasSuffix(s, " <==") {
			name := s[4 : len(s)-4]
			for _, f := range n.files {
				if f == name {
					out[i] = name
				}
			}
		}
	}
	return out
}

// headingNames names rg --heading output: a block starts with its file's
// name on a line of its own, after a blank line or at the top.
func (n *naming) headingNames(plain []string) []string {
	out := make([]string, len(plain))
	prevBlank := true
	for i, s := range plain {
		if prevBlank && s != "" && !numberedLine(s) && n.under(s) {
			out[i] = s
		}
		prevBlank = s == ""
	}
	return out
}

func numberedLine(s string) bool {
	j := 0
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	return j > 0 && j < len(s) && (s[j] == ':' || s[j] == '-')
}

// diffNames names diff output by its file headers: "diff --git a/x b/y",
// or "--- x" followed by "+++ y". Text before the first header (a commit's
// message) belongs to the first file.
func (n *naming) diffNames(plain []string) []string {
	out := make([]string, len(plain))
	inGit := false
	for i, s := range plain {
		switch {
		case strings.HasPrefix(s, "diff --git "):
			a, b, ok := gitPair(s[len("diff --git "):])
			if !ok {
				continue
			}
			out[i] = n.diffName(b, a)
			inGit = true
		case strings.HasPrefix(s, "--- ") && i+1 < len(plain) && strings.HasPrefix(plain[i+1], "+++ "):
			if !inGit {
				out[i] = n.diffName(headerName(plain[i+1][4:]), headerName(s[4:]))
			}
			inGit = false
		}
	}
	return out
}

// diffName is the file a diff section is of: the new name, or the old one
// when the file was deleted.
func (n *naming) diffName(newName, oldName string) string {
	strip := func(s string) string {
		if n.git && (strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/")) {
			return s[2:]
		}
		return s
	}
	newName, oldName = strip(newName), strip(oldName)
	if newName == "/dev/null" || newName == "" {
		return oldName
	}
	return newName
}

// gitPair splits "a/x b/x" (the names of a diff --git line).
func gitPair(s string) (string, string, bool) {
	if i := strings.Index(s, " b/"); i > 0 {
		return s[:i], s[i+1:], true
	}
	a, b, ok := strings.Cut(s, " ")
	return a, b, ok
}

// headerName is the name in a ---/+++ line: up to the tab before a date.
func headerName(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	return strings.Trim(s, `"`)
}
