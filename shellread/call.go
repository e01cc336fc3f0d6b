package shellread

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// command is what scrim knows of one program: its options and what it
// prints.
type command struct {
	spec optSpec
	run  func(in *interp, c *call) []seg
}

// call is one run of a command: its name, parsed arguments, raw arguments
// and input.
type call struct {
	name  string
	args  []string // after the name
	p     parsed
	stdin []seg
}

func (in *interp) callExpr(c *syntax.CallExpr, stdin []seg) []seg {
	if len(c.Args) == 0 {
		for _, a := range c.Assigns {
			in.assign(a) // x=$(cat f) prints nothing; x now stands for f
		}
		return nil
	}
	// VAR=value cmd: the assignment is the command's environment only.
	type savedVar struct {
		v  string
		ok bool
	}
	saved := map[string]savedVar{}
	for _, a := range c.Assigns {
		if a.Name != nil {
			v, ok := in.vars[a.Name.Value]
			saved[a.Name.Value] = savedVar{v, ok}
		}
		in.assign(a)
	}
	fields, subs, why := in.fields(c.Args, true)
	var out []seg
	if why != "" {
		out = append(subs, unknownSeg("%s", why))
	} else {
		// What the arguments stand for may be printed (echo "$(cat f)").
		var held []seg
		for _, f := range fields {
			held = append(held, in.marksIn(f)...)
		}
		out = append(in.call(fields, stdin, subs), fileSegs(held)...)
	}
	for k, s := range saved {
		if s.ok {
			in.vars[k] = s.v
		} else {
			delete(in.vars, k)
		}
	}
	return out
}

// fileSegs keeps the segs that carry content: what a command substitution
// in an argument may have put on the output (echo "$(cat f)").
func fileSegs(segs []seg) []seg {
	var out []seg
	for _, s := range segs {
		if len(s.files) > 0 || s.naming != nil || s.unknown != "" {
			out = append(out, s)
		}
	}
	return out
}

// call follows a simple command given as expanded words.
func (in *interp) call(args []string, stdin []seg, subs []seg) []seg {
	if len(args) == 0 {
		return nil
	}
	if isMarked(args[0]) {
		return []seg{unknownSeg("the program to run is computed from other output")}
	}
	in.nameArgs(args[1:])
	if body, ok := in.funcs[args[0]]; ok {
		if in.depth > maxDepth {
			return []seg{unknownSeg("functions nested too deep to follow")}
		}
		in.depth++
		defer func() { in.depth-- }()
		return in.stmt(body, stdin)
	}
	name := filepath.Base(strings.ReplaceAll(args[0], `\`, "/"))
	lower := strings.ToLower(strings.TrimSuffix(strings.ToLower(name), ".exe"))
	cmd, ok := commands[name]
	if !ok {
		cmd, ok = commands[lower]
	}
	if !ok {
		if strings.ContainsAny(args[0], `/\`) {
			return []seg{unknownSeg("the command runs the program %s, which may read anything", args[0])}
		}
		return []seg{unknownSeg("the command %s is not known to scrim", name)}
	}
	c := &call{name: lower, args: args[1:], stdin: stdin}
	p, bad := cmd.spec.parse(c.args)
	if bad != "" {
		return []seg{unknownSeg("the option %s of %s is not known to scrim", bad, lower)}
	}
	c.p = p
	return cmd.run(in, c)
}

// nameArgs notes the arguments that look like paths among what the
// command names, so that a tool can refuse a command naming a denied path
// before it runs it.
func (in *interp) nameArgs(args []string) {
	for _, a := range args {
		if strings.Contains(a, "://") || isMarked(a) {
			continue
		}
		if i := strings.IndexByte(a, '='); i > 0 && strings.HasPrefix(a, "--") {
			a = a[i+1:] // --file=x
		}
		if strings.HasPrefix(a, "-") || a == "" {
			continue
		}
		if strings.ContainsRune(a, '/') || strings.HasPrefix(a, ".") || strings.HasPrefix(a, "~") {
			in.names.add(in.resolve(a)...)
		}
	}
}

// content is what a command that prints (something of) its operand files,
// or its input when it has none, puts on the output. select says it passes
// whole lines through, so that lines naming their files keep naming them.
func (in *interp) content(c *call, ops []string, pass bool) []seg {
	if len(ops) == 0 {
		if pass {
			return c.stdin
		}
		return derive(c.stdin)
	}
	var out []seg
	for _, op := range ops {
		if op == "-" {
			if pass {
				out = append(out, c.stdin...)
			} else {
				out = append(out, derive(c.stdin)...)
			}
			continue
		}
		segs, v := in.readFile(op)
		if !v.ok() {
			return append(out, v.seg)
		}
		out = append(out, segs...)
	}
	return out
}

// derive is what a command that transforms its input (cut, awk, nl, wc)
// puts on the output: the input's content, no longer naming its files line
// by line. The files a search named per line are then lost, unless the
// command gave them by name.
func derive(in []seg) []seg {
	var out []seg
	for _, s := range in {
		if s.naming == nil {
			out = append(out, seg{files: s.files, unknown: s.unknown})
			continue
		}
		if len(s.naming.roots) > 0 || len(s.naming.forms) == 0 {
			out = append(out, unknownSeg("the output of a search of folders is transformed, so the files it came from are not shown"))
			continue
		}
		out = append(out, seg{files: s.naming.forms})
	}
	return out
}

// copyTo notes that dst now holds what src held (cp, mv, tee, sed -i).
func (in *interp) copyTo(dst string, segs []seg, appendTo bool) {
	forms := in.resolve(dst)
	if forms == nil {
		return
	}
	in.names.add(forms...)
	in.wrote(forms[0])
	if !appendTo {
		delete(in.written, forms[0])
	}
	in.written[forms[0]] = append(in.written[forms[0]], segs...)
}
