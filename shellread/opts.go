package shellread

import (
	"strings"
)

// optSpec is a command's option syntax: which options it has and which take
// an argument. An option not listed makes the command's reads unknown: an
// unknown option may take an argument, and guessing which word is the file
// is the narrower guess that must not be made.
type optSpec struct {
	flags   string   // short options without an argument
	args    string   // short options with one ("n" for head -n 5, -n5)
	long    []string // long options without an argument
	longArg []string // long options with one (--lines=5, --lines 5)
	num     bool     // -NUM is an option (head -20)
	plus    bool     // +NUM is an option (tail +5)
	posix   bool     // options end at the first operand
	// anyLong accepts long options it does not list, as flags (for commands
	// whose long options never take a separate argument).
	anyLong bool
	// raw leaves the arguments to the command's own reading (shells,
	// interpreters, git, find): they are all operands.
	raw bool
}

// opt is one option as given.
type opt struct {
	name string // the letter or long name, without dashes
	val  string
	has  bool // it took an argument
}

// parsed is a command line split into options and operands.
type parsed struct {
	opts     []opt
	ops      []string
	dashdash bool // options ended with "--"
}

func (p *parsed) has(names ...string) bool {
	for _, o := range p.opts {
		for _, n := range names {
			if o.name == n {
				return true
			}
		}
	}
	return false
}

// val returns the last value given to any of names.
func (p *parsed) val(names ...string) (string, bool) {
	v, ok := "", false
	for _, o := range p.opts {
		for _, n := range names {
			if o.name == n && o.has {
				v, ok = o.val, true
			}
		}
	}
	return v, ok
}

// vals returns every value given to any of names, in order.
func (p *parsed) vals(names ...string) []string {
	var out []string
	for _, o := range p.opts {
		for _, n := range names {
			if o.name == n && o.has {
				out = append(out, o.val)
			}
		}
	}
	return out
}

// parse splits args (without the command name) by spec. bad is the first
// option the spec does not know.
func (s *optSpec) parse(args []string) (p parsed, bad string) {
	if s.raw {
		return parsed{ops: args}, ""
	}
	ended := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case ended || a == "-" || len(a) < 2:
			p.ops = append(p.ops, a)
			if s.posix {
				ended = true
			}
		case a == "--":
			ended, p.dashdash = true, true
		case strings.HasPrefix(a, "--"):
			name, val, eq := strings.Cut(a[2:], "=")
			switch {
			case contains(s.longArg, name):
				if !eq {
					if i+1 >= len(args) {
						return p, a
					}
					i++
					val = args[i]
				}
				p.opts = append(p.opts, opt{name: name, val: val, has: true})
			case contains(s.long, name), s.anyLong:
				p.opts = append(p.opts, opt{name: name, val: val, has: eq})
			default:
				return p, "--" + name
			}
		case a[0] == '+' && s.plus:
			p.opts = append(p.opts, opt{name: "+", val: a[1:], has: true})
		case a[0] == '-':
			if s.num && allDigits(a[1:]) {
				p.opts = append(p.opts, opt{name: "NUM", val: a[1:], has: true})
				continue
			}
			for j := 1; j < len(a); j++ {
				c := a[j : j+1]
				switch {
				case strings.Contains(s.args, c):
					val := a[j+1:]
					if val == "" {
						if i+1 >= len(args) {
							return p, "-" + c
						}
						i++
						val = args[i]
					}
					p.opts = append(p.opts, opt{name: c, val: val, has: true})
					j = len(a)
				case strings.Contains(s.flags, c):
					p.opts = append(p.opts, opt{name: c})
				case s.num && a[j] >= '0' && a[j] <= '9' && allDigits(a[j:]):
					p.opts = append(p.opts, opt{name: "NUM", val: a[j:], has: true})
					j = len(a)
				default:
					return p, "-" + c
				}
			}
		default:
			p.ops = append(p.ops, a)
			if s.posix {
				ended = true
			}
		}
	}
	return p, ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
