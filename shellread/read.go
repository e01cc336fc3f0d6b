package shellread

import (
	"path/filepath"
	"strings"

	"github.com/scrim-dev/scrim/policy"
)

// Command is one shell command as an agent ran it.
type Command struct {
	// Line is the command line, a shell script (Claude Code's Bash input,
	// Codex's cmd string).
	Line string
	// Argv is the command as an argument vector, when the agent recorded one
	// (Codex's ["bash", "-lc", "…"]); Line is ignored when it is set.
	Argv []string
	// Dir is the folder the command started in; "" when not recorded (a
	// relative name then cannot be resolved and the answer is unknown).
	Dir string
	// Home expands ~ and $HOME; "" leaves them unknown.
	Home string
}

// Reading is what a command's output holds.
type Reading struct {
	// Files are the canonical forms of every file whose content the output
	// may hold, in order of first appearance. With Unknown set they are
	// what is known to have been read, a lower bound.
	Files []string
	// Parts cut the output into pieces, each from the one file it names,
	// when the output names its files line by line. Their texts joined are
	// the output. nil means the whole output is attributed to Files.
	Parts []Part
	// Unknown says why the files the output came from cannot be told; ""
	// when they can (Files nil then means the command read no file: echo,
	// ls, git status).
	Unknown string
	// Names are the canonical forms of every path the command names: what a
	// tool must be allowed to read before it runs the command.
	Names []string
	// Writes are the canonical forms of the files the command writes (a
	// redirection's target, tee's, sed -i's, cp's), in order: what the
	// command holds of what goes into them is their content.
	Writes []string
	// Copies say, for each file of Writes, what went into it: the files
	// whose content it may now hold, or why that cannot be told. A later
	// command that reads it reads those.
	Copies []Copy
}

// Copy is what a command wrote into File: the content of From (none: its
// own words, such as an echo's), or content whose files cannot be told
// (Unknown says why).
type Copy struct {
	File    string
	From    []string
	Unknown string
}

// Part is a piece of the output and the file it came from.
type Part struct {
	Text string
	File string // canonical
}

// Resolver gives the canonical forms of a file named name relative to dir
// (both as the command had them; name may be absolute). It returns nil when
// name cannot be resolved (dir unknown and name relative).
type Resolver func(name, dir string) []string

// Resolve is the Resolver of this machine: names are joined to dir without
// cleaning and canonicalised by policy.Forms, so that ".." after a symlink
// is taken both as the kernel and as a path-cleaning program takes it.
func Resolve(name, dir string) []string {
	if name == "" || strings.IndexByte(name, 0) >= 0 {
		return nil
	}
	if d, ok := policy.DrivePath(name); ok {
		return []string{d}
	}
	abs := name
	if !filepath.IsAbs(name) {
		if d, ok := policy.DrivePath(dir); ok {
			if w, ok := policy.DrivePath(d + "/" + strings.ReplaceAll(name, `\`, "/")); ok {
				return []string{w}
			}
		}
		if !filepath.IsAbs(dir) {
			return nil
		}
		abs = dir + "/" + name
	}
	return policy.Forms(abs)
}

// Read tells what cmd's output holds, resolving names with res (Resolve
// when nil).
func Read(cmd Command, output string, res Resolver) Reading {
	if res == nil {
		res = Resolve
	}
	in := newInterp(cmd, res)
	var segs []seg
	if strings.IndexByte(cmd.Line+strings.Join(cmd.Argv, ""), 0) >= 0 || isMarked(cmd.Line+strings.Join(cmd.Argv, "")) {
		// No shell passes a NUL byte on, and scrim's own marks are no
		// command's text.
		return Reading{Unknown: "the command holds characters no shell passes on"}
	}
	if cmd.Argv != nil {
		segs = in.argv(cmd.Argv)
	} else {
		segs = in.script(cmd.Line)
	}
	r := in.combine(segs, output)
	r.Names, r.Writes = in.names.list, in.writes.list
	for _, w := range in.writes.list {
		r.Copies = append(r.Copies, in.copyOf(w))
	}
	return r
}

// pathSet is an ordered set of paths.
type pathSet struct {
	list []string
	seen map[string]bool
}

func (s *pathSet) add(paths ...string) {
	for _, p := range paths {
		if p == "" || s.seen[p] {
			continue
		}
		if s.seen == nil {
			s.seen = map[string]bool{}
		}
		s.seen[p] = true
		s.list = append(s.list, p)
	}
}

// combine turns what the command's parts put on the output into a Reading
// of that output. A single way of naming files (however many commands
// share it) cuts the output into parts; content attributed as a whole, or
// two ways of naming at once, make the whole output everyone's.
func (in *interp) combine(segs []seg, output string) Reading {
	var files pathSet
	unknown := ""
	var namings []*naming
	for _, s := range segs {
		if s.unknown != "" && unknown == "" {
			unknown = s.unknown
		}
		files.add(s.files...)
		if s.naming != nil {
			namings = append(namings, s.naming)
		}
	}
	if len(namings) > 0 && len(files.list) == 0 && unknown == "" {
		if strings.TrimSpace(output) == "" {
			return Reading{}
		}
		if n, ok := merge(namings); ok {
			parts, named, ok := n.split(output, in.res)
			switch {
			case ok && n.single && !namesUnder(output, n):
				// One operand that turned out to be a file: no names.
				return Reading{Files: n.forms}
			case ok:
				return Reading{Files: named, Parts: parts}
			case len(n.roots) == 0 || n.single:
				return Reading{Files: n.forms} // files given by name, none printed
			}
			return Reading{Unknown: "the search's output names no files scrim can tell"}
		}
	}
	// Everything is attributed as a whole: the files read, and every file
	// a naming output names.
	for _, n := range namings {
		_, named, ok := n.split(output, in.res)
		switch {
		case n.single && ok && namesUnder(output, n):
			files.add(named...)
		case n.single:
			files.add(n.forms...)
		case ok:
			files.add(n.forms...)
			files.add(named...)
		default:
			files.add(n.forms...)
			if len(n.roots) > 0 && unknown == "" && strings.TrimSpace(output) != "" {
				unknown = "the output mixes a search with other content, and the search's files cannot be told"
			}
		}
	}
	return Reading{Files: files.list, Unknown: unknown}
}

// namesUnder reports whether an output cut by a single-operand naming
// really named files under that operand (it was a folder), rather than
// being one file's lines.
func namesUnder(output string, n *naming) bool {
	op := strings.TrimRight(n.files[0], `/\`)
	for _, l := range lines(output) {
		if l = plainLine(l); strings.HasPrefix(l, op+"/") || strings.HasPrefix(l, op+`\`) {
			return true
		}
	}
	return false
}

// merge joins namings of one style and folder (rg a; rg b) into one.
func merge(ns []*naming) (*naming, bool) {
	if len(ns) == 1 {
		return ns[0], true
	}
	m := *ns[0]
	m.files = append([]string(nil), m.files...)
	m.forms = append([]string(nil), m.forms...)
	m.roots = append([]string(nil), m.roots...)
	for _, n := range ns[1:] {
		if n.style != m.style || n.dir != m.dir || n.numbered != m.numbered || n.nul != m.nul || n.git != m.git {
			return nil, false
		}
		m.files = append(m.files, n.files...)
		m.forms = append(m.forms, n.forms...)
		m.roots = append(m.roots, n.roots...)
		m.context = m.context || n.context
		m.single = false
	}
	return &m, true
}

// copyOf is what the command wrote into the file at the canonical path w.
func (in *interp) copyOf(w string) Copy {
	c := Copy{File: w}
	var from pathSet
	for _, s := range in.written[w] {
		from.add(s.files...)
		if n := s.naming; n != nil {
			from.add(n.forms...)
			if len(n.roots) > 0 && c.Unknown == "" {
				c.Unknown = "what a search of folders printed into it"
			}
		}
		if s.unknown != "" && c.Unknown == "" {
			c.Unknown = s.unknown
		}
	}
	c.From = from.list
	return c
}
