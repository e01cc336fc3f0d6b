package shellread

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/scrim-dev/scrim/policy"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// seg is what one command puts on the output: content of files as a whole,
// lines that name their files, or something that cannot be told. The zero
// seg is text that is no file's content (echo, ls).
type seg struct {
	files   []string // canonical forms of the files whose content it carries as a whole
	naming  *naming  // non-nil: its lines name the files they come from
	unknown string   // why it cannot be told
	// list is, for a command that prints names it was given or found (echo,
	// find), those names, so that xargs can follow them; listed says they
	// are known.
	list   []string
	listed bool
}

// maxDepth bounds nested shells (bash -c 'bash -c …') and function calls.
const maxDepth = 8

// maxLoop is the most items a for loop is followed for.
const maxLoop = 64

// interp follows a command the way the shell runs it. It holds what the
// shell would know at each point: the folder, literal variables, the files
// written so far and what they hold.
type interp struct {
	res   Resolver
	home  string
	dir   string // "" when it cannot be told
	why   string // why dir cannot be told
	vars  map[string]string
	funcs map[string]*syntax.Stmt
	// written maps a file written earlier in the command (canonical) to
	// what was written to it: reading it back reads that.
	written map[string][]seg
	// writes are the files the command writes, in order (Reading.Writes).
	writes pathSet
	// marks are values that stand for content (a command substitution, a
	// variable read from input, a process substitution): text holding one
	// is not a literal, and what it stands for is these segs.
	marks []mark
	names pathSet
	depth int
}

type mark struct {
	segs []seg
	file bool // a process substitution: a file whose content is segs
}

func newInterp(cmd Command, res Resolver) *interp {
	in := &interp{res: res, home: cmd.Home, vars: map[string]string{}, funcs: map[string]*syntax.Stmt{}, written: map[string][]seg{}}
	in.setDir(cmd.Dir)
	return in
}

func (in *interp) setDir(dir string) {
	switch {
	case dir == "":
		in.dir, in.why = "", "the command's working folder was not recorded"
	case filepath.IsAbs(dir):
		in.dir, in.why = filepath.Clean(dir), ""
	default:
		if d, ok := drive(dir); ok {
			in.dir, in.why = d, ""
			return
		}
		in.dir, in.why = "", "the working folder "+dir+" is not absolute"
	}
}

// parsers are reused: a parser is a large allocation, and an import asks
// for one per command.
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

func unknownSeg(format string, a ...any) seg { return seg{unknown: fmt.Sprintf(format, a...)} }

// script parses and follows a shell script.
func (in *interp) script(src string) []seg {
	if in.depth > maxDepth {
		return []seg{unknownSeg("shells nested too deep to follow")}
	}
	p := parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(src), "")
	parsers.Put(p)
	if err != nil {
		return []seg{unknownSeg("the command could not be parsed as a shell command")}
	}
	in.depth++
	defer func() { in.depth-- }()
	return in.stmts(f.Stmts, nil)
}

// argv follows a command given as an argument vector (no shell parses it).
func (in *interp) argv(args []string) []seg {
	if len(args) == 0 {
		return nil
	}
	return in.call(args, nil, nil)
}

func (in *interp) stmts(list []*syntax.Stmt, stdin []seg) []seg {
	var out []seg
	for _, s := range list {
		out = append(out, in.stmt(s, stdin)...)
	}
	return out
}

// stmt follows one statement, with stdin flowing into it (nil: none).
func (in *interp) stmt(s *syntax.Stmt, stdin []seg) []seg {
	redir, ok := in.redirects(s.Redirs, stdin)
	if !ok.ok() {
		return []seg{ok.seg}
	}
	if redir.in != nil {
		stdin = redir.in
	}
	var out []seg
	if s.Cmd != nil {
		out = in.command(s.Cmd, stdin)
	}
	if redir.to != "" {
		in.wrote(redir.to)
		if !redir.appendTo {
			delete(in.written, redir.to)
		}
		in.written[redir.to] = append(in.written[redir.to], out...)
	}
	if redir.drop {
		return nil
	}
	return out
}

// redirection is what a statement's redirections do.
type redirection struct {
	in       []seg  // stdin from a file or here-document
	drop     bool   // stdout goes elsewhere (a file, /dev/null)
	to       string // the file stdout is written to (canonical), if one
	appendTo bool
}

// verdict is ok, or a seg that says why not.
type verdict struct{ seg seg }

func (v verdict) ok() bool { return v.seg.unknown == "" }

func (in *interp) redirects(rs []*syntax.Redirect, stdin []seg) (redirection, verdict) {
	var r redirection
	for _, rd := range rs {
		fd := ""
		if rd.N != nil {
			fd = rd.N.Value
		}
		switch rd.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			word := rd.Word
			if rd.Op != syntax.WordHdoc {
				word = rd.Hdoc
			}
			var segs []seg
			if word != nil {
				if rd.Op != syntax.WordHdoc && quotedDelim(rd.Word) {
					segs = nil // <<'EOF': the body is taken literally
				} else {
					_, subs, why := in.fields([]*syntax.Word{word}, false)
					if why != "" {
						return r, verdict{unknownSeg("%s", why)}
					}
					segs = subs
				}
			}
			r.in = append([]seg{{}}, segs...)
			continue
		}
		target, why := in.word(rd.Word)
		if why != "" {
			return r, verdict{unknownSeg("%s", why)}
		}
		switch rd.Op {
		case syntax.RdrIn, syntax.RdrInOut:
			if fd != "" && fd != "0" {
				continue
			}
			segs, v := in.readFile(target)
			if !v.ok() {
				return r, v
			}
			r.in = segs
		case syntax.DplIn:
			// <&N: another descriptor; nothing this command line opened.
		case syntax.DplOut:
			// >&2, 2>&1: the output still reaches the transcript.
			if (fd == "" || fd == "1") && target != "1" && target != "2" && target != "-" {
				r.drop = true // >&N to a descriptor opened elsewhere
			}
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
			if fd != "" && fd != "1" && rd.Op != syntax.RdrAll && rd.Op != syntax.AppAll {
				continue // 2>file: only error messages go there
			}
			r.drop = true
			if target == "/dev/null" {
				continue
			}
			forms := in.resolve(target)
			if forms == nil {
				continue
			}
			r.to = forms[0]
			r.appendTo = rd.Op == syntax.AppOut || rd.Op == syntax.AppAll
		}
	}
	return r, verdict{}
}

func quotedDelim(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		switch p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(p.(*syntax.Lit).Value, `\`) {
				return true
			}
		}
	}
	return false
}

// command follows a command node.
func (in *interp) command(c syntax.Command, stdin []seg) []seg {
	switch c := c.(type) {
	case *syntax.CallExpr:
		return in.callExpr(c, stdin)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.Pipe, syntax.PipeAll:
			left := in.sub(func() []seg { return in.stmt(c.X, stdin) })
			return in.sub(func() []seg { return in.stmt(c.Y, left) })
		}
		return append(in.stmt(c.X, stdin), in.stmt(c.Y, stdin)...)
	case *syntax.Subshell:
		return in.sub(func() []seg { return in.stmts(c.Stmts, stdin) })
	case *syntax.Block:
		return in.stmts(c.Stmts, stdin)
	case *syntax.IfClause:
		var out []seg
		for ic := c; ic != nil; ic = ic.Else {
			out = append(out, in.stmts(ic.Cond, stdin)...)
			out = append(out, in.stmts(ic.Then, stdin)...)
		}
		return out
	case *syntax.WhileClause:
		// A loop reading its input line by line: what it reads is stdin.
		out := in.stmts(c.Cond, stdin)
		return append(out, in.stmts(c.Do, stdin)...)
	case *syntax.ForClause:
		return in.forLoop(c, stdin)
	case *syntax.CaseClause:
		_, subs, why := in.fields([]*syntax.Word{c.Word}, false)
		if why != "" {
			return []seg{unknownSeg("%s", why)}
		}
		out := subs
		for _, it := range c.Items {
			out = append(out, in.stmts(it.Stmts, stdin)...)
		}
		return out
	case *syntax.FuncDecl:
		if c.Name != nil {
			in.funcs[c.Name.Value] = c.Body
		}
		return nil
	case *syntax.DeclClause:
		return in.decl(c)
	case *syntax.TestClause, *syntax.ArithmCmd, *syntax.LetClause:
		return nil
	case *syntax.TimeClause:
		if c.Stmt == nil {
			return nil
		}
		return in.stmt(c.Stmt, stdin)
	}
	return []seg{unknownSeg("the command uses shell syntax scrim does not follow")}
}

// sub runs fn in a subshell: the folder and variables it changes are put back.
func (in *interp) sub(fn func() []seg) []seg {
	dir, why := in.dir, in.why
	vars := make(map[string]string, len(in.vars))
	for k, v := range in.vars {
		vars[k] = v
	}
	out := fn()
	in.dir, in.why, in.vars = dir, why, vars
	return out
}

func (in *interp) forLoop(c *syntax.ForClause, stdin []seg) []seg {
	wi, ok := c.Loop.(*syntax.WordIter)
	if !ok {
		return []seg{unknownSeg("a C-style for loop")}
	}
	fields, subs, why := in.fields(wi.Items, true)
	name := wi.Name.Value
	if why != "" || len(fields) > maxLoop || hasMark(fields) {
		// The loop variable cannot be told: follow the body once with it
		// standing for that.
		if why == "" {
			why = "the loop variable $" + name + " takes values that cannot be told"
		}
		in.vars[name] = in.markOf(unknownSeg("%s", why), false)
		return append(subs, in.stmts(c.Do, stdin)...)
	}
	out := subs
	for _, f := range fields {
		in.vars[name] = f
		out = append(out, in.stmts(c.Do, stdin)...)
	}
	return out
}

func (in *interp) decl(c *syntax.DeclClause) []seg {
	var out []seg
	for _, a := range c.Args {
		if a.Name == nil {
			continue
		}
		out = append(out, in.assign(a)...)
	}
	return out
}

// assign sets a variable: a literal value is known, anything else stands
// for what it came from.
func (in *interp) assign(a *syntax.Assign) []seg {
	if a.Name == nil {
		return nil
	}
	name := a.Name.Value
	if a.Naked || a.Value == nil {
		if a.Array != nil {
			in.vars[name] = in.markOf(unknownSeg("array variable $%s", name), false)
			return nil
		}
		if _, ok := in.vars[name]; !ok && !a.Naked {
			in.vars[name] = ""
		}
		return nil
	}
	val, subs, why := in.fields([]*syntax.Word{a.Value}, false)
	switch {
	case why != "":
		in.vars[name] = in.markOf(unknownSeg("%s", why), false)
	case len(subs) > 0:
		in.vars[name] = in.markOf(seg{}, false, subs...)
	default:
		v := strings.Join(val, " ")
		if a.Append {
			v = in.vars[name] + v
		}
		in.vars[name] = v
	}
	return subs
}

// markOf returns the text that stands for segs (or for s when segs is empty).
func (in *interp) markOf(s seg, file bool, segs ...seg) string {
	if len(segs) == 0 {
		segs = []seg{s}
	}
	in.marks = append(in.marks, mark{segs: segs, file: file})
	return markOpen + strconv.Itoa(len(in.marks)-1) + markClose
}

// A mark is written with two private-use characters, which no command
// line holds and which expansion keeps (it drops NUL bytes).
const (
	markOpen  = "\ue000"
	markClose = "\ue001"
)

func isMarked(s string) bool { return strings.Contains(s, markOpen) }

func hasMark(fields []string) bool {
	for _, f := range fields {
		if isMarked(f) {
			return true
		}
	}
	return false
}

// marksIn returns the segs the marks in s stand for.
func (in *interp) marksIn(s string) []seg {
	var out []seg
	for {
		i := strings.Index(s, markOpen)
		if i < 0 {
			return out
		}
		s = s[i+len(markOpen):]
		j := strings.Index(s, markClose)
		if j < 0 {
			return out
		}
		if n, err := strconv.Atoi(s[:j]); err == nil && n < len(in.marks) {
			out = append(out, in.marks[n].segs...)
		}
		s = s[j+len(markClose):]
	}
}

// fileMark returns the segs of s when s is exactly a process substitution.
func (in *interp) fileMark(s string) ([]seg, bool) {
	if !strings.HasPrefix(s, markOpen) || !strings.HasSuffix(s, markClose) {
		return nil, false
	}
	n, err := strconv.Atoi(s[len(markOpen) : len(s)-len(markClose)])
	if err != nil || n >= len(in.marks) || !in.marks[n].file {
		return nil, false
	}
	return in.marks[n].segs, true
}

// environ is the shell's environment as far as it can be told.
type environ struct{ in *interp }

func (e environ) Get(name string) expand.Variable {
	str := func(s string) expand.Variable { return expand.Variable{Set: true, Kind: expand.String, Str: s} }
	switch name {
	case "HOME":
		if e.in.home != "" {
			return str(e.in.home)
		}
		return expand.Variable{}
	case "PWD":
		if e.in.dir != "" {
			return str(e.in.dir)
		}
		return expand.Variable{}
	case "IFS":
		return expand.Variable{}
	}
	if v, ok := e.in.vars[name]; ok {
		return str(v)
	}
	return expand.Variable{}
}

func (e environ) Each(fn func(string, expand.Variable) bool) {
	for k := range e.in.vars {
		if !fn(k, e.Get(k)) {
			return
		}
	}
}

// fields expands words as arguments: quotes removed, ~ and known
// variables expanded, braces and globs (against this machine's disk)
// expanded. subs are the segs of command substitutions in them. why says
// why the words cannot be told: an unknown variable, a glob that matches
// nothing here, ~ without a home folder.
func (in *interp) fields(words []*syntax.Word, split bool) (out []string, subs []seg, why string) {
	for _, w := range words {
		if w == nil {
			continue
		}
		if lit, ok := literalWord(w); ok {
			out = append(out, lit) // most words: nothing to expand
			continue
		}
		if why := in.checkWord(w); why != "" {
			return nil, subs, why
		}
		globbed := false
		cfg := &expand.Config{
			Env:      environ{in},
			NoUnset:  true,
			NullGlob: true,
			CmdSubst: func(wr io.Writer, cs *syntax.CmdSubst) error {
				segs := in.sub(func() []seg { return in.stmts(cs.Stmts, nil) })
				subs = append(subs, segs...)
				_, err := io.WriteString(wr, in.markOf(seg{}, false, append([]seg{{}}, segs...)...))
				return err
			},
			ProcSubst: func(ps *syntax.ProcSubst) (string, error) {
				if ps.Op != syntax.CmdIn {
					return "/dev/null", nil // >(cmd): written to, not read
				}
				segs := in.sub(func() []seg { return in.stmts(ps.Stmts, nil) })
				return in.markOf(seg{}, true, append([]seg{{}}, segs...)...), nil
			},
			ReadDir2: func(dir string) ([]fs.DirEntry, error) {
				globbed = true
				if in.dir == "" {
					return nil, fmt.Errorf("no folder to expand a glob in")
				}
				entries, err := os.ReadDir(dir)
				if errors.Is(err, fs.ErrNotExist) {
					return nil, nil // nothing here to match
				}
				return entries, err
			},
		}
		fs, err := expandFields(cfg, w)
		if err != nil {
			return nil, subs, "a word of the command cannot be expanded (" + wordText(w) + ")"
		}
		if globbed && len(fs) == 0 {
			return nil, subs, "the glob " + wordText(w) + " matches nothing on this machine"
		}
		if !split && len(fs) > 1 && !globbed {
			fs = []string{strings.Join(fs, " ")}
		}
		out = append(out, fs...)
	}
	return out, subs, ""
}

// expandFields is expand.Fields, which panics on some malformed globs
// ("[0-\\*]" compiles to an invalid regular expression): such a word cannot
// be expanded.
func expandFields(cfg *expand.Config, w *syntax.Word) (fs []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			fs, err = nil, fmt.Errorf("cannot expand: %v", r)
		}
	}()
	return expand.Fields(cfg, w)
}

// literalWord is the text of a word that expansion leaves as it is: plain
// text and quotes, with no escapes, variables, globs, braces or ~.
func literalWord(w *syntax.Word) (string, bool) {
	plain := func(p syntax.WordPart) (string, bool) {
		switch p := p.(type) {
		case *syntax.Lit:
			return p.Value, !strings.ContainsAny(p.Value, "~*?[{\\$")
		case *syntax.SglQuoted:
			return p.Value, !p.Dollar
		case *syntax.DblQuoted:
			switch len(p.Parts) {
			case 0:
				return "", true
			case 1:
				if l, ok := p.Parts[0].(*syntax.Lit); ok && !strings.ContainsAny(l.Value, "\\$`") {
					return l.Value, true
				}
			}
		}
		return "", false
	}
	if len(w.Parts) == 1 {
		return plain(w.Parts[0])
	}
	var b strings.Builder
	for _, p := range w.Parts {
		s, ok := plain(p)
		if !ok {
			return "", false
		}
		b.WriteString(s)
	}
	return b.String(), true
}

// word expands one word that must stay one field (a redirection target).
func (in *interp) word(w *syntax.Word) (string, string) {
	fs, _, why := in.fields([]*syntax.Word{w}, false)
	if why != "" {
		return "", why
	}
	if len(fs) != 1 {
		return "", "a redirection names " + strconv.Itoa(len(fs)) + " files"
	}
	return fs[0], ""
}

// checkWord finds what expand would guess at: variables scrim does not
// know, ~ without a home folder, ~user, arithmetic.
func (in *interp) checkWord(w *syntax.Word) string {
	if len(w.Parts) > 0 {
		if lit, ok := w.Parts[0].(*syntax.Lit); ok && strings.HasPrefix(lit.Value, "~") {
			name, _, _ := strings.Cut(lit.Value[1:], "/")
			switch {
			case name != "":
				return "~" + name + " names another user's home folder"
			case in.home == "":
				return "~ is used but the home folder is not known"
			}
		}
	}
	why := ""
	syntax.Walk(w, func(n syntax.Node) bool {
		if why != "" {
			return false
		}
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false // followed when expanded
		case *syntax.ArithmExp:
			why = "arithmetic in a word of the command"
			return false
		case *syntax.ParamExp:
			if n.Param == nil {
				why = "a parameter expansion scrim does not follow"
				return false
			}
			name := n.Param.Value
			_, known := in.vars[name]
			switch {
			case name == "HOME" && in.home != "", name == "PWD" && in.dir != "", known:
			default:
				why = "the variable $" + name + " is not known"
			}
			if n.Exp != nil || n.Repl != nil || n.Slice != nil || n.Index != nil || n.Names != 0 || n.Excl || n.Length || n.Width {
				if why == "" && (n.Exp != nil || n.Repl != nil || n.Slice != nil) {
					return true
				}
				if why == "" {
					why = "a parameter expansion scrim does not follow"
				}
			}
			return false
		}
		return true
	})
	return why
}

func wordText(w *syntax.Word) string {
	var b strings.Builder
	syntax.NewPrinter().Print(&b, w)
	s := b.String()
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// resolve gives the canonical forms of a name relative to the folder, nil
// when it cannot be told.
// wrote notes that the command writes the file at the canonical path: a
// device (/dev/null, /dev/stderr) holds nothing afterwards.
func (in *interp) wrote(path string) {
	if !strings.HasPrefix(path, "/dev/") && !strings.HasPrefix(path, "/proc/") {
		in.writes.add(path)
	}
}

func (in *interp) resolve(name string) []string {
	if name == "" || strings.IndexByte(name, 0) >= 0 || isMarked(name) {
		return nil
	}
	if !filepath.IsAbs(name) && in.dir == "" {
		if _, ok := drive(name); !ok {
			return nil
		}
	}
	return in.res(name, in.dir)
}

// readFile is what reading the file named name gives: its content, or what
// this command wrote to it earlier, or the content of a process
// substitution.
func (in *interp) readFile(name string) ([]seg, verdict) {
	if segs, ok := in.fileMark(name); ok {
		return segs, verdict{}
	}
	if isMarked(name) {
		for _, s := range in.marksIn(name) {
			if s.unknown != "" {
				return nil, verdict{s}
			}
		}
		return nil, verdict{unknownSeg("a file name is computed from the output of another command")}
	}
	if name == "/dev/null" {
		return nil, verdict{}
	}
	forms := in.resolve(name)
	if forms == nil {
		return nil, verdict{unknownSeg("%s, so %s cannot be resolved", in.why, name)}
	}
	in.names.add(forms...)
	out := []seg{{files: forms}}
	if w, ok := in.written[forms[0]]; ok {
		out = append(out, w...)
	}
	return out, verdict{}
}

// cd changes the folder as bash's cd does: by name (".." drops the last
// name), not physically.
func (in *interp) cd(target string, ok bool) {
	switch {
	case !ok:
		in.dir, in.why = "", "the command changes to a folder that cannot be told"
	case target == "" || target == "~":
		if in.home == "" {
			in.dir, in.why = "", "the command changes to the home folder, which is not known"
			return
		}
		in.dir, in.why = in.home, ""
	case target == "-":
		in.dir, in.why = "", "the command changes back to a folder that cannot be told (cd -)"
	case isMarked(target):
		in.dir, in.why = "", "the command changes to a computed folder"
	default:
		if d, ok := drive(target); ok {
			in.dir, in.why = d, ""
			return
		}
		if filepath.IsAbs(target) {
			in.dir, in.why = filepath.Clean(target), ""
			return
		}
		if in.dir == "" {
			return
		}
		if d, ok := drive(in.dir); ok {
			if w, ok := drive(d + "/" + strings.ReplaceAll(target, `\`, "/")); ok {
				in.dir = w
			}
			return
		}
		in.dir = filepath.Clean(in.dir + "/" + target)
	}
	if in.dir != "" {
		in.names.add(in.res(in.dir, "/")...)
	}
}

// drive is policy.DrivePath: a Windows path, in the form scrim records.
func drive(p string) (string, bool) { return policy.DrivePath(p) }
