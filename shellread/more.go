package shellread

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

var diffSpec = optSpec{
	flags: "abBcdEeilNnPpqrsTtuwyZ",
	args:  "CDFILSUWx",
	num:   true,
	long: []string{"brief", "report-identical-files", "ignore-case", "ignore-tab-expansion", "ignore-trailing-space",
		"ignore-space-change", "ignore-all-space", "ignore-blank-lines", "text", "strip-trailing-cr", "recursive",
		"new-file", "unidirectional-new-file", "side-by-side", "suppress-common-lines", "expand-tabs", "initial-tab",
		"minimal", "speed-large-files", "normal", "ed", "rcs", "suppress-blank-empty", "no-dereference", "unified",
		"context", "show-c-function", "paginate", "left-column", "color"},
	longArg: []string{"ignore-matching-lines", "label", "show-function-line", "exclude", "exclude-from",
		"starting-file", "width", "line-format", "old-line-format", "new-line-format", "unchanged-line-format",
		"old-group-format", "new-group-format", "changed-group-format", "unchanged-group-format",
		"horizontal-lines", "from-file", "to-file", "tabsize", "palette"},
}

// diff prints both files; with -r it compares folders, naming each file in
// its headers.
func diff(in *interp, c *call) []seg {
	ops := append(c.p.ops, c.p.vals("from-file", "to-file")...)
	if c.p.has("q", "brief") {
		for _, op := range ops {
			in.names.add(in.resolve(op)...)
		}
		return []seg{{}} // "Files a and b differ"
	}
	if c.p.has("r", "recursive") {
		n := &naming{style: diffHeaders, dir: in.dir, roots: ops}
		for _, op := range ops {
			if segs, v := in.readFile(op); !v.ok() {
				return []seg{v.seg}
			} else {
				for _, s := range segs {
					n.forms = append(n.forms, s.files...)
				}
			}
		}
		return []seg{{naming: n}}
	}
	return in.content(c, ops, false)
}

// awk reads its operand files (operands like x=1 set variables); a
// program that reads other files itself (getline < f) or runs commands
// cannot be followed.
func awk(in *interp, c *call) []seg {
	ops := c.p.ops
	if progs := c.p.vals("f"); len(progs) > 0 {
		for _, f := range progs {
			in.names.add(in.resolve(f)...)
		}
		return []seg{unknownSeg("the command runs an awk program from a file")}
	}
	if len(ops) == 0 {
		return []seg{unknownSeg("awk without a program")}
	}
	prog := ops[0]
	if awkIO.MatchString(prog) {
		return []seg{unknownSeg("the awk program reads other files or runs commands")}
	}
	var files []string
	for _, op := range ops[1:] {
		if isAssignment(op) {
			continue
		}
		files = append(files, op)
	}
	if len(files) == 0 && !strings.Contains(prog, "BEGIN") {
		return derive(c.stdin)
	}
	return in.content(c, files, false)
}

var awkIO = regexp.MustCompile(`getline|system\s*\(|\|\s*"|\|&|ENVIRON|close\s*\(`)

func isAssignment(s string) bool {
	i := strings.IndexByte(s, '=')
	if i <= 0 {
		return false
	}
	for j := 0; j < i; j++ {
		c := s[j]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

var jqSpec = optSpec{
	flags:   "rjacnesSCMRh0",
	args:    "fL",
	long:    []string{"raw-output", "join-output", "ascii-output", "compact-output", "null-input", "exit-status", "slurp", "sort-keys", "color-output", "monochrome-output", "raw-input", "tab", "seq", "stream", "stream-errors", "args", "jsonargs", "raw-output0", "help", "version", "build-configuration", "unbuffered"},
	longArg: []string{"indent", "from-file"},
}

// jq reads its operand files. --arg/--argjson take two words, and
// --rawfile/--slurpfile read a file into a variable.
func jq(in *interp, c *call) []seg {
	var args []string
	var extra []string
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		switch a {
		case "--arg", "--argjson":
			i += 2
			continue
		case "--rawfile", "--slurpfile":
			if i+2 < len(c.args) {
				extra = append(extra, c.args[i+2])
			}
			i += 2
			continue
		case "--args", "--jsonargs":
			i = len(c.args) // the rest are values, not files
			continue
		}
		args = append(args, a)
	}
	p, bad := jqSpec.parse(args)
	if bad != "" {
		return []seg{unknownSeg("the option %s of jq is not known to scrim", bad)}
	}
	ops := p.ops
	filter := ""
	if f, ok := p.val("f", "from-file"); ok {
		in.names.add(in.resolve(f)...)
	} else if len(ops) > 0 {
		filter, ops = ops[0], ops[1:]
	}
	if jqEnv.MatchString(filter) {
		return []seg{unknownSeg("the jq filter reads the environment")}
	}
	out := in.content(c, append(ops, extra...), false)
	if len(ops) == 0 && p.has("n", "null-input") {
		out = in.content(c, extra, false)
		if len(extra) == 0 {
			return []seg{{}}
		}
	}
	return out
}

var jqEnv = regexp.MustCompile(`\$ENV|\benv\b|\binput_filename\b|\$__prog_args`)

var yqSpec = optSpec{
	flags:   "rePNCMijnsyYkhV",
	args:    "opIdfx",
	anyLong: true,
}

// yq (mikefarah's and the Python one): an optional eval subcommand, an
// expression, then files. load() and env() read other things.
func yq(in *interp, c *call) []seg {
	args := c.args
	if len(args) > 0 {
		switch args[0] {
		case "eval", "e", "eval-all", "ea":
			args = args[1:]
		}
	}
	p, _ := yqSpec.parse(args)
	ops := p.ops
	if len(ops) == 0 {
		return derive(c.stdin)
	}
	expr := ops[0]
	if strings.Contains(expr, "load") || strings.Contains(expr, "env") || strings.Contains(expr, "$ENV") {
		return []seg{unknownSeg("the yq expression reads other files or the environment")}
	}
	if p.has("i") {
		return nil
	}
	return in.content(c, ops[1:], false)
}

// sqlite3 DB [SQL]: what it prints comes from DB. SQL that reads or runs
// other files (.read, readfile(), ATTACH, .import, .shell) cannot be
// followed.
func sqlite3(in *interp, c *call) []seg {
	var ops []string
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		switch a {
		case "-cmd", "-separator", "-newline", "-nullvalue", "-mmap", "-vfs", "-lookaside", "-maxsize", "-pagecache", "-heap":
			if a == "-cmd" && i+1 < len(c.args) && sqlIO.MatchString(c.args[i+1]) {
				return []seg{unknownSeg("the SQL reads or runs other files")}
			}
			i++
		case "-init":
			if i+1 < len(c.args) {
				in.names.add(in.resolve(c.args[i+1])...)
			}
			return []seg{unknownSeg("sqlite3 runs an init file")}
		default:
			if !strings.HasPrefix(a, "-") {
				ops = append(ops, a)
			}
		}
	}
	if len(ops) == 0 {
		return []seg{unknownSeg("sqlite3 without a database")}
	}
	for _, sql := range ops[1:] {
		if sqlIO.MatchString(sql) {
			return []seg{unknownSeg("the SQL reads or runs other files")}
		}
	}
	if len(ops) == 1 && c.stdin != nil {
		return []seg{unknownSeg("sqlite3 runs SQL given on its input")}
	}
	if ops[0] == ":memory:" {
		return []seg{{}}
	}
	return in.content(c, ops[:1], false)
}

var sqlIO = regexp.MustCompile(`(?i)readfile|writefile|attach|\.read|\.import|\.shell|\.system|\.once|\.output|load_extension|\.load|edit\(`)

// xargs runs its command with names read from its input: followed when the
// input is a list scrim knows (echo, printf, find).
func xargs(in *interp, c *call) []seg {
	p := &c.p
	cmd := p.ops
	if len(cmd) == 0 {
		cmd = []string{"echo"}
	}
	var names []string
	known := true
	for _, s := range c.stdin {
		if !s.listed {
			known = false
			break
		}
		for _, l := range s.list {
			names = append(names, strings.Fields(l)...)
		}
	}
	if !known || c.stdin == nil {
		return []seg{unknownSeg("xargs runs %s on names from input that is not shown", cmd[0])}
	}
	if r, ok := p.val("I", "i"); ok {
		var out []seg
		for _, n := range names {
			args := make([]string, len(cmd))
			for i, a := range cmd {
				args[i] = strings.ReplaceAll(a, r, n)
			}
			out = append(out, in.call(args, nil, nil)...)
		}
		return out
	}
	return in.call(append(append([]string{}, cmd...), names...), nil, nil)
}

// find prints names; with -exec it runs a command on the files it finds,
// which is followed when the folders are on this machine and the
// expression is one scrim can evaluate.
func find(in *interp, c *call) []seg {
	args := c.args
	for len(args) > 0 && (args[0] == "-H" || args[0] == "-L" || args[0] == "-P") {
		args = args[1:]
	}
	var roots []string
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") && args[0] != "(" && args[0] != "!" {
		roots, args = append(roots, args[0]), args[1:]
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	for _, r := range roots {
		in.names.add(in.resolve(r)...)
	}
	expr, exec, err := parseFind(args)
	if err != "" {
		if exec != nil {
			return []seg{unknownSeg("%s", err)}
		}
		return []seg{{}}
	}
	var found []string
	for _, r := range roots {
		forms := in.resolve(r)
		if forms == nil {
			return []seg{unknownSeg("%s, so the folder find searches cannot be told", in.why)}
		}
		got, ok := walkFind(r, forms[0], expr)
		if !ok {
			if exec != nil {
				return []seg{unknownSeg("find -exec runs %s on files that cannot be listed on this machine", exec[0])}
			}
			return []seg{{}}
		}
		found = append(found, got...)
	}
	if exec == nil {
		return []seg{{list: found, listed: true}}
	}
	var out []seg
	batch := false
	for _, a := range exec {
		batch = batch || a == "{}+"
	}
	if batch {
		var args []string
		for _, a := range exec {
			if a == "{}+" {
				args = append(args, found...)
			} else {
				args = append(args, a)
			}
		}
		return in.call(args, nil, nil)
	}
	for _, f := range found {
		args := make([]string, len(exec))
		for i, a := range exec {
			args[i] = strings.ReplaceAll(a, "{}", f)
		}
		out = append(out, in.call(args, nil, nil)...)
	}
	if len(found) == 0 {
		return nil
	}
	return out
}

// maxFound bounds the files find is followed for.
const maxFound = 4096

// walkFind lists what find prints under root (as named; real is its
// canonical form), for the expressions parseFind accepts.
func walkFind(root, real string, e findExpr) ([]string, bool) {
	var out []string
	ok := true
	err := filepath.WalkDir(real, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			ok = false
			return filepath.SkipAll
		}
		rel, _ := filepath.Rel(real, p)
		name := root
		if rel != "." {
			name = strings.TrimSuffix(root, "/") + "/" + rel
		}
		depth := 0
		if rel != "." {
			depth = strings.Count(rel, "/") + 1
		}
		if e.maxDepth >= 0 && depth > e.maxDepth {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if depth >= e.minDepth && e.match(name, d) {
			out = append(out, name)
			if len(out) > maxFound {
				ok = false
				return filepath.SkipAll
			}
		}
		return nil
	})
	if err != nil {
		return nil, false
	}
	return out, ok
}

// findExpr is a find expression scrim can evaluate: tests joined by and,
// each maybe negated.
type findExpr struct {
	tests              []findTest
	maxDepth, minDepth int
}

type findTest struct {
	not  bool
	kind string // name, iname, path, ipath, type
	arg  string
}

func (e findExpr) match(name string, d os.DirEntry) bool {
	for _, t := range e.tests {
		var ok bool
		switch t.kind {
		case "name", "iname":
			pat, s := t.arg, d.Name()
			if t.kind == "iname" {
				pat, s = strings.ToLower(pat), strings.ToLower(s)
			}
			ok, _ = filepath.Match(pat, s)
		case "path", "ipath", "wholename":
			pat, s := t.arg, name
			if t.kind == "ipath" {
				pat, s = strings.ToLower(pat), strings.ToLower(s)
			}
			ok = matchAnyDepth(pat, s)
		case "type":
			switch t.arg {
			case "f":
				ok = d.Type().IsRegular()
			case "d":
				ok = d.IsDir()
			case "l":
				ok = d.Type()&os.ModeSymlink != 0
			}
		}
		if ok == t.not {
			return false
		}
	}
	return true
}

// matchAnyDepth is find's -path: * matches across slashes.
func matchAnyDepth(pat, s string) bool {
	rx := "^" + strings.NewReplacer(`\*`, ".*", `\?`, ".", `\[`, "[", `\]`, "]").Replace(regexp.QuoteMeta(pat)) + "$"
	re, err := regexp.Compile(rx)
	return err == nil && re.MatchString(s)
}

// parseFind reads the expression; exec is the -exec command with {} + kept
// as "{}+". err says what scrim cannot evaluate.
func parseFind(args []string) (e findExpr, exec []string, err string) {
	e.maxDepth, e.minDepth = -1, 0
	not := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			err = "find " + a + " without its argument"
			return ""
		}
		switch a {
		case "!", "-not":
			not = !not
			continue
		case "-a", "-and":
			continue
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-type":
			e.tests = append(e.tests, findTest{not: not, kind: strings.TrimPrefix(a, "-"), arg: next()})
		case "-maxdepth":
			e.maxDepth = atoi(next())
		case "-mindepth":
			e.minDepth = atoi(next())
		case "-print", "-print0", "-ls", "-xdev", "-mount", "-follow", "-nowarn", "-warn", "-daystart", "-noleaf", "-depth":
		case "-exec", "-execdir", "-ok", "-okdir":
			for i++; i < len(args); i++ {
				if args[i] == ";" || args[i] == `\;` {
					break
				}
				if args[i] == "+" && len(exec) > 0 && exec[len(exec)-1] == "{}" {
					exec[len(exec)-1] = "{}+"
					break
				}
				exec = append(exec, args[i])
			}
			if len(exec) == 0 {
				err = "find -exec without a command"
			}
		default:
			if err == "" {
				err = "the find expression uses " + a + ", which scrim does not evaluate"
			}
		}
		not = false
	}
	return e, exec, err
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}
