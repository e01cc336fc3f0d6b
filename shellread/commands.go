package shellread

import (
	"regexp"
	"strings"
)

// commands is what scrim knows of each program, by name.
var commands map[string]*command

func init() {
	commands = map[string]*command{}
	add := func(c *command, names ...string) {
		for _, n := range names {
			commands[n] = c
		}
	}

	// Readers: print their operand files (or input), whole lines or not.
	add(&command{spec: optSpec{flags: "AbeEnstTuv", long: []string{"show-all", "number-nonblank", "show-ends", "number", "squeeze-blank", "show-tabs", "show-nonprinting"}},
		run: func(in *interp, c *call) []seg {
			return in.content(c, c.p.ops, !c.p.has("n", "b", "A", "E", "T", "v", "e", "t", "number", "number-nonblank", "show-all", "show-ends", "show-tabs", "show-nonprinting"))
		}}, "cat")
	add(&command{spec: optSpec{flags: "qvz", args: "nc", long: []string{"quiet", "silent", "verbose", "zero-terminated"}, longArg: []string{"lines", "bytes"}, num: true},
		run: headTail}, "head")
	add(&command{spec: optSpec{flags: "fFqrvz", args: "ncs", long: []string{"follow", "retry", "quiet", "silent", "verbose", "zero-terminated"}, longArg: []string{"lines", "bytes", "sleep-interval", "pid", "max-unchanged-stats"}, num: true, plus: true},
		run: headTail}, "tail")
	add(&command{spec: optSpec{flags: "nrEsuzi", args: "efl", long: []string{"quiet", "silent", "regexp-extended", "separate", "unbuffered", "null-data", "posix", "debug", "sandbox", "follow-symlinks", "in-place"}, longArg: []string{"expression", "file", "line-length"}},
		run: sed}, "sed", "gsed")
	add(&command{spec: optSpec{flags: "p", args: "bdfhilnsvw", long: []string{"no-renumber"}, longArg: []string{"body-numbering", "section-delimiter", "footer-numbering", "header-numbering", "line-increment", "join-blank-lines", "number-format", "number-separator", "starting-line-number", "number-width"}},
		run: transform}, "nl")
	pager := &command{spec: optSpec{flags: "cdefFiImMnNqQrRsSuwWX~", anyLong: true, args: "bhjkoOPptTxyz"}, run: pass}
	add(pager, "less", "more", "most")
	add(&command{spec: optSpec{flags: "pPnuAf", args: "lrHmL", anyLong: true, longArg: []string{"language", "line-range", "highlight-line", "map-syntax", "theme", "style", "tabs", "wrap", "terminal-width", "paging", "color", "decorations", "italic-text", "pager", "file-name", "diff-context"}},
		run: pass}, "bat", "batcat")
	add(&command{spec: optSpec{flags: "brs", args: "s", long: []string{"before", "regex"}, longArg: []string{"separator"}}, run: pass}, "tac")

	// Searches.
	add(&command{spec: grepSpec, run: grep}, "grep", "egrep", "fgrep")
	add(&command{spec: rgSpec, run: rg}, "rg")

	// Filters that keep whole lines.
	add(&command{spec: optSpec{flags: "bdfgiMhnRrcCsuVmz", args: "ktoSTy", long: []string{"ignore-leading-blanks", "dictionary-order", "ignore-case", "general-numeric-sort", "ignore-nonprinting", "month-sort", "human-numeric-sort", "numeric-sort", "random-sort", "reverse", "version-sort", "check", "merge", "stable", "unique", "zero-terminated", "debug"}, longArg: []string{"key", "field-separator", "output", "buffer-size", "temporary-directory", "parallel", "batch-size", "compress-program", "random-source", "sort"}},
		run: func(in *interp, c *call) []seg {
			out := in.content(c, c.p.ops, true)
			if o, ok := c.p.val("o", "output"); ok {
				in.copyTo(o, out, false)
				return nil
			}
			return out
		}}, "sort")
	add(&command{spec: optSpec{flags: "cdDiuz", args: "fsw", long: []string{"count", "repeated", "all-repeated", "ignore-case", "unique", "zero-terminated", "group"}, longArg: []string{"skip-fields", "skip-chars", "check-chars"}},
		run: func(in *interp, c *call) []seg {
			ops := c.p.ops
			var to string
			if len(ops) > 1 {
				ops, to = ops[:1], ops[1]
			}
			out := in.content(c, ops, !c.p.has("c", "count"))
			if to != "" {
				in.copyTo(to, out, false)
				return nil
			}
			return out
		}}, "uniq")
	add(&command{spec: optSpec{flags: "aip", long: []string{"append", "ignore-interrupts"}, longArg: []string{"output-error"}},
		run: func(in *interp, c *call) []seg {
			for _, f := range c.p.ops {
				in.copyTo(f, c.stdin, c.p.has("a", "append"))
			}
			return c.stdin
		}}, "tee")

	// Transformers: their output is derived from their input or files.
	add(&command{spec: optSpec{args: "bcdf", flags: "snz", long: []string{"complement", "only-delimited", "zero-terminated"}, longArg: []string{"bytes", "characters", "delimiter", "fields", "output-delimiter"}}, run: transform}, "cut")
	add(&command{spec: optSpec{flags: "clmwL", long: []string{"bytes", "chars", "lines", "words", "max-line-length", "total"}}, run: transform}, "wc")
	add(&command{spec: optSpec{flags: "bsw", args: "w", long: []string{"bytes", "spaces"}, longArg: []string{"width"}, num: true}, run: transform}, "fold")
	add(&command{spec: optSpec{flags: "cstu", args: "wpgd", anyLong: true, num: true}, run: transform}, "fmt")
	add(&command{spec: optSpec{flags: "tnxeJLRr", args: "scoNOWHdl", anyLong: true}, run: transform}, "column")
	add(&command{spec: optSpec{flags: "sz", args: "d", long: []string{"serial", "zero-terminated"}, longArg: []string{"delimiters"}}, run: transform}, "paste")
	add(&command{spec: optSpec{}, run: transform}, "rev")
	add(&command{spec: optSpec{flags: "i", args: "t", long: []string{"initial", "all", "first-only"}, longArg: []string{"tabs"}, num: true}, run: transform}, "expand", "unexpand")
	add(&command{spec: optSpec{flags: "dDinh", args: "wb", long: []string{"decode", "ignore-garbage", "help", "version"}, longArg: []string{"wrap", "break", "input", "output"}}, run: transform}, "base64", "base32", "basenc")
	add(&command{spec: optSpec{flags: "aCEeiprRud", args: "cglosn", anyLong: true}, run: xxd}, "xxd")
	add(&command{spec: optSpec{flags: "bcCdoxv", args: "ensf", anyLong: true}, run: transform}, "hexdump", "hd")
	add(&command{spec: optSpec{flags: "bcdfilosxv", args: "AjNtSw", anyLong: true}, run: transform}, "od")
	add(&command{spec: optSpec{flags: "adfw", args: "ntTeo", anyLong: true, num: true}, run: transform}, "strings")
	add(&command{spec: optSpec{flags: "bctwz", anyLong: true}, run: transform}, "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum", "shasum", "md5")
	add(&command{spec: optSpec{flags: "cs", args: "fto", long: []string{"list", "silent"}, longArg: []string{"from-code", "to-code", "output"}}, run: transform}, "iconv")
	add(&command{spec: optSpec{flags: "123iz", long: []string{"check-order", "nocheck-order", "total", "zero-terminated"}, longArg: []string{"output-delimiter"}}, run: transform}, "comm")
	add(&command{spec: optSpec{flags: "iz", args: "12aejotv", anyLong: true}, run: transform}, "join")
	add(&command{spec: optSpec{flags: "blsz", args: "in", anyLong: true}, run: transform}, "cmp")
	add(&command{spec: diffSpec, run: diff}, "diff", "colordiff")
	add(&command{spec: optSpec{flags: "cCdst", long: []string{"complement", "delete", "squeeze-repeats", "truncate-set1"}},
		run: func(in *interp, c *call) []seg { return derive(c.stdin) }}, "tr")
	add(&command{spec: optSpec{args: "Ffv", posix: true}, run: awk}, "awk", "gawk", "mawk", "nawk")
	add(&command{spec: optSpec{raw: true}, run: jq}, "jq", "gojq", "jaq")
	add(&command{spec: optSpec{raw: true}, run: yq}, "yq")
	add(&command{spec: optSpec{raw: true}, run: sqlite3}, "sqlite3")

	// Commands whose output is not file content.
	plain := &command{spec: optSpec{anyLong: true, flags: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%", args: ""}, run: nothing}
	add(plain, "ls", "tree", "du", "df", "stat", "file", "pwd", "date", "whoami", "id", "uname", "hostname", "uptime",
		"basename", "dirname", "realpath", "readlink", "which", "whereis", "true", "false", ":", "test", "[",
		"mkdir", "rmdir", "rm", "touch", "chmod", "chown", "chgrp", "sleep", "wait", "clear", "unset", "shopt",
		"alias", "unalias", "umask", "trap", "hash", "ulimit", "exit", "return", "break", "continue", "shift",
		"nproc", "arch", "tty", "logname", "groups", "tput", "stty", "sync", "cal", "seq", "jobs", "disown",
		"kill", "killall", "pkill", "pgrep", "ps", "free", "lsof", "apply_patch", "applypatch", "mktemp",
		"diffstat", "fc-list", "locale", "history")
	add(&command{spec: optSpec{anyLong: true, flags: "neE"}, run: echo}, "echo")
	add(&command{spec: optSpec{args: "v"}, run: printf}, "printf")
	add(&command{spec: optSpec{flags: "LPe@"}, run: cd}, "cd", "pushd")
	add(&command{spec: optSpec{}, run: func(in *interp, c *call) []seg {
		in.cd("", false)
		return nil
	}}, "popd")
	add(&command{spec: optSpec{flags: "abdfHiLlnPRrsTuvxZ", args: "St", anyLong: true}, run: cpmv}, "cp", "mv", "install", "ln")
	add(&command{spec: optSpec{flags: "rsu", args: "dnpt", anyLong: true, posix: true},
		run: func(in *interp, c *call) []seg {
			for _, v := range c.p.ops {
				in.vars[v] = in.markOf(seg{}, false, append([]seg{{}}, c.stdin...)...)
			}
			return nil
		}}, "read")
	add(&command{spec: optSpec{anyLong: true, flags: "0iuvC", args: "uCS", posix: true}, run: envCmd}, "env")
	add(&command{spec: optSpec{anyLong: true, flags: "0"}, run: func(in *interp, c *call) []seg {
		return []seg{unknownSeg("the command prints the environment, which may hold credentials")}
	}}, "printenv")
	add(&command{spec: optSpec{anyLong: true, flags: "abefhkmnptuvxBCEHPT", args: "o", posix: true}, run: set}, "set")
	add(&command{spec: optSpec{flags: "fnp", posix: true}, run: exportCmd}, "export", "declare", "typeset", "local", "readonly")
	add(&command{spec: optSpec{flags: "vVp", posix: true}, run: commandCmd}, "command")

	// Wrappers: run the rest of the line as a command.
	add(&command{spec: optSpec{posix: true, anyLong: true}, run: wrap(0)}, "nohup", "builtin", "exec", "unbuffer", "chronic", "caffeinate", "time")
	add(&command{spec: optSpec{flags: "AbEHiKklnPSsV", args: "ugCDhpTRr", anyLong: true, posix: true}, run: wrap(0)}, "sudo", "doas")
	add(&command{spec: optSpec{flags: "v", args: "sk", long: []string{"foreground", "preserve-status", "verbose"}, longArg: []string{"signal", "kill-after"}, posix: true}, run: wrap(1)}, "timeout", "gtimeout")
	add(&command{spec: optSpec{args: "n", longArg: []string{"adjustment"}, posix: true, num: true}, run: wrap(0)}, "nice")
	add(&command{spec: optSpec{args: "cnp", flags: "t", posix: true, anyLong: true}, run: wrap(0)}, "ionice")
	add(&command{spec: optSpec{args: "ioe", anyLong: true, posix: true}, run: wrap(0)}, "stdbuf")
	add(&command{spec: optSpec{posix: true, anyLong: true, flags: "0ortx", args: "aEdIiLlnPs"}, run: xargs}, "xargs")
	add(&command{spec: optSpec{raw: true}, run: find}, "find", "gfind")
	add(&command{spec: optSpec{raw: true}, run: shell}, "bash", "sh", "zsh", "dash", "ksh")
	add(&command{spec: optSpec{raw: true}, run: pwshCmd}, "powershell", "pwsh")
	add(&command{spec: optSpec{raw: true}, run: git}, "git")

	// Programs: their output may hold anything they read.
	for _, p := range []string{"python", "python2", "python3", "py", "node", "nodejs", "deno", "bun", "ruby", "perl", "php", "lua", "Rscript"} {
		add(&command{spec: optSpec{raw: true}, run: interpreter}, p)
	}
	for _, p := range []string{"go", "cargo", "rustc", "make", "gmake", "cmake", "ninja", "npm", "npx", "pnpm", "yarn", "pip", "pip3", "uv", "poetry",
		"pytest", "jest", "vitest", "mocha", "tsc", "eslint", "prettier", "gcc", "g++", "cc", "clang", "javac", "java", "mvn", "gradle", "dotnet",
		"docker", "kubectl", "helm", "terraform", "gofmt", "goimports", "staticcheck", "golangci-lint", "ruff", "mypy", "black", "swift", "xcodebuild", "bundle", "rake", "rails", "composer", "sbt", "zig", "mix", "elixir", "erl", "ghc", "stack", "cabal", "dune", "opam", "nix", "bazel", "buck", "just", "task", "source", ".", "eval", "watch", "strace", "ltrace", "gdb", "lldb", "valgrind", "tmux", "screen", "script", "expect", "vim", "vi", "nvim", "nano", "emacs", "code", "open", "xdg-open"} {
		add(&command{spec: optSpec{raw: true}, run: program}, p)
	}
	for _, p := range []string{"curl", "wget", "http", "https", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "telnet", "ftp", "gh", "aws", "gcloud", "az"} {
		add(&command{spec: optSpec{raw: true}, run: network}, p)
	}
}

func nothing(in *interp, c *call) []seg { return nil }

func pass(in *interp, c *call) []seg { return in.content(c, c.p.ops, true) }

func transform(in *interp, c *call) []seg { return in.content(c, c.p.ops, false) }

func program(in *interp, c *call) []seg {
	return []seg{unknownSeg("the command runs a program (%s), which may read anything", c.name)}
}

func network(in *interp, c *call) []seg {
	return []seg{unknownSeg("the command reads from the network (%s)", c.name)}
}

func headTail(in *interp, c *call) []seg {
	ops := c.p.ops
	if c.name == "tail" && c.p.has("f", "F", "follow") && len(ops) == 0 {
		return derive(c.stdin)
	}
	quiet := c.p.has("q", "quiet", "silent")
	if len(ops) > 1 && !quiet || len(ops) == 1 && c.p.has("v", "verbose") {
		// Each file is printed under a "==> name <==" header.
		n := &naming{style: fileHeaders, dir: in.dir}
		for _, op := range ops {
			if op == "-" {
				return in.content(c, ops, false)
			}
			segs, v := in.readFile(op)
			if !v.ok() {
				return []seg{v.seg}
			}
			n.files = append(n.files, op)
			for _, s := range segs {
				n.forms = append(n.forms, s.files...)
			}
		}
		return []seg{{naming: n}}
	}
	return in.content(c, ops, true)
}

// selectScript matches sed scripts that only pick lines: "1,80p", "5q", "$p".
var selectScript = regexp.MustCompile(`^\s*((\d+|\$|/[^/]*/)(\s*,\s*(\d+|\$|\+\d+|/[^/]*/))?\s*[pqd]\s*[;\n]?\s*)+$`)

func sed(in *interp, c *call) []seg {
	ops := c.p.ops
	scripts := c.p.vals("e", "expression")
	if !c.p.has("e", "expression", "f", "file") {
		if len(ops) == 0 {
			return []seg{unknownSeg("sed without a script")}
		}
		scripts, ops = []string{ops[0]}, ops[1:]
	}
	for _, f := range c.p.vals("f", "file") {
		in.names.add(in.resolve(f)...)
	}
	for _, s := range scripts {
		if !selectScript.MatchString(s) && sedRuns(s) {
			return []seg{unknownSeg("the sed script reads, writes or runs other files")}
		}
	}
	if c.p.has("i", "in-place") {
		for _, op := range ops {
			segs, v := in.readFile(op)
			if !v.ok() {
				return []seg{v.seg}
			}
			in.copyTo(op, segs, false)
		}
		return nil
	}
	selecting := c.p.has("n", "quiet", "silent") && len(scripts) > 0
	for _, s := range scripts {
		selecting = selecting && selectScript.MatchString(s)
	}
	return in.content(c, ops, selecting)
}

// sedRuns reports whether a sed script has a command that reads or writes a
// file or runs one (r, R, w, W, e; s///w, s///e): the file name is in the
// script, where scrim does not look for it.
func sedRuns(script string) bool {
	for _, cmd := range strings.FieldsFunc(script, func(r rune) bool { return r == ';' || r == '\n' || r == '{' || r == '}' }) {
		cmd = strings.TrimLeft(cmd, " \t")
		// Skip the address: numbers, $, /regex/, commas, !, spaces.
		for len(cmd) > 0 {
			switch c := cmd[0]; {
			case c >= '0' && c <= '9', c == '$', c == ',', c == '!', c == ' ', c == '+', c == '~':
				cmd = cmd[1:]
				continue
			case c == '/':
				if k := strings.IndexByte(cmd[1:], '/'); k >= 0 {
					cmd = cmd[k+2:]
					continue
				}
			}
			break
		}
		if cmd == "" {
			continue
		}
		switch cmd[0] {
		case 'r', 'R', 'w', 'W', 'e':
			return true
		case 's':
			if len(cmd) < 2 {
				continue
			}
			delim, seen, i := cmd[1], 0, 2
			for ; i < len(cmd) && seen < 2; i++ {
				if cmd[i] == '\\' {
					i++
					continue
				}
				if cmd[i] == delim {
					seen++
				}
			}
			if strings.ContainsAny(cmd[min(i, len(cmd)):], "we") {
				return true
			}
		}
	}
	return false
}

func xxd(in *interp, c *call) []seg {
	ops := c.p.ops
	if c.p.has("r") {
		return in.content(c, ops[:min(1, len(ops))], false)
	}
	if len(ops) > 1 {
		out := in.content(c, ops[:1], false)
		in.copyTo(ops[1], out, false)
		return nil
	}
	return in.content(c, ops, false)
}

func echo(in *interp, c *call) []seg {
	return []seg{{list: c.args, listed: true}}
}

func printf(in *interp, c *call) []seg {
	ops := c.p.ops
	if v, ok := c.p.val("v"); ok {
		in.vars[v] = in.markOf(seg{}, false)
		return nil
	}
	if len(ops) > 1 && (ops[0] == "%s\n" || ops[0] == "%s\\n") {
		return []seg{{list: ops[1:], listed: true}}
	}
	return []seg{{}}
}

func cd(in *interp, c *call) []seg {
	switch len(c.p.ops) {
	case 0:
		in.cd("", true)
	case 1:
		in.cd(c.p.ops[0], true)
	default:
		in.cd("", false)
	}
	return nil
}

func cpmv(in *interp, c *call) []seg {
	ops := c.p.ops
	if c.name == "ln" && !c.p.has("s", "symbolic") {
		// a hard link: the new name is the same file
	}
	if len(ops) < 2 {
		return nil
	}
	dst := ops[len(ops)-1]
	if t, ok := c.p.val("t", "target-directory"); ok {
		dst = t
		ops = append(ops, "")
	}
	for _, src := range ops[:len(ops)-1] {
		segs, v := in.readFile(src)
		if !v.ok() {
			return []seg{v.seg}
		}
		in.copyTo(dst, segs, true)
		in.copyTo(strings.TrimSuffix(dst, "/")+"/"+lastName(src), segs, false)
	}
	return nil
}

func lastName(p string) string {
	p = strings.TrimRight(p, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

func envCmd(in *interp, c *call) []seg {
	ops := c.p.ops
	for len(ops) > 0 && strings.Contains(ops[0], "=") {
		ops = ops[1:]
	}
	if len(ops) == 0 {
		return []seg{unknownSeg("the command prints the environment, which may hold credentials")}
	}
	return in.call(ops, c.stdin, nil)
}

func set(in *interp, c *call) []seg {
	if len(c.args) == 0 {
		return []seg{unknownSeg("the command prints the environment, which may hold credentials")}
	}
	return nil
}

func exportCmd(in *interp, c *call) []seg {
	if len(c.p.ops) == 0 || c.p.has("p") {
		return []seg{unknownSeg("the command prints the environment, which may hold credentials")}
	}
	for _, a := range c.p.ops {
		name, val, ok := strings.Cut(a, "=")
		if ok {
			in.vars[name] = val
		}
	}
	return nil
}

func commandCmd(in *interp, c *call) []seg {
	if c.p.has("v", "V") {
		return nil // prints where a command is
	}
	return in.call(c.p.ops, c.stdin, nil)
}

// wrap runs the command that follows skip operands (timeout's duration).
func wrap(skip int) func(in *interp, c *call) []seg {
	return func(in *interp, c *call) []seg {
		ops := c.p.ops
		if len(ops) <= skip {
			return nil
		}
		return in.call(ops[skip:], c.stdin, nil)
	}
}

func shell(in *interp, c *call) []seg {
	// bash [-euo pipefail] [-l] -c SCRIPT [NAME ARGS...]: follow SCRIPT.
	args := c.args
	hasC, i := false, 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' && a[0] != '+' {
			break
		}
		if strings.HasPrefix(a, "--") {
			if a == "--rcfile" || a == "--init-file" {
				i++
			}
			continue
		}
		body := a[1:]
		hasC = hasC || strings.ContainsRune(body, 'c')
		if strings.HasSuffix(body, "o") || strings.HasSuffix(body, "O") {
			i++ // -o pipefail
		}
	}
	switch {
	case !hasC && i < len(args):
		return []seg{unknownSeg("the command runs the shell script %s, which may read anything", args[i])}
	case !hasC && c.stdin != nil:
		return []seg{unknownSeg("the command runs a shell script given on its input")}
	case i >= len(args):
		return nil
	}
	script := args[i]
	if isMarked(script) {
		return []seg{unknownSeg("the shell script to run is computed")}
	}
	return in.sub(func() []seg { return in.script(script) })
}

func interpreter(in *interp, c *call) []seg {
	args := c.args
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c" || a == "-e" || a == "--eval" || a == "-p" || a == "--print" || a == "-E":
			if i+1 >= len(args) {
				return []seg{unknownSeg("%s without its code", c.name)}
			}
			return inline(c, args[i+1])
		case a == "-m":
			if i+1 < len(args) {
				return []seg{unknownSeg("the command runs the %s module %s, which may read anything", c.name, args[i+1])}
			}
		case a == "-" || !strings.HasPrefix(a, "-"):
			if a == "-" || c.stdin != nil && a == "" {
				return []seg{unknownSeg("the command runs a %s script given on its input", c.name)}
			}
			return []seg{unknownSeg("the command runs the %s script %s, which may read anything", c.name, a)}
		}
	}
	if c.stdin != nil {
		return []seg{unknownSeg("the command runs a %s script given on its input", c.name)}
	}
	return nil
}

// fileAccess finds, in inline code, what may read files, run programs or
// print the environment.
var fileAccess = regexp.MustCompile(`\b(open|read|readFile\w*|readlines|Path|pathlib|os|sys\.argv|subprocess|system|popen|exec\w*|eval|spawn\w*|glob|shutil|io|fs|require|import|__import__|importlib|compile|environ|getenv|env|process\.env|ENV|File|IO|Dir|Kernel|load\w*|fopen|file_get_contents|include|dofile|loadfile|child_process|Deno|Bun|fetch|http\w*|urllib|requests|socket)\b|` + "`")

// safeImport matches imports of modules that neither read files nor run
// anything.
var safeImport = regexp.MustCompile(`(?m)^\s*(from\s+\w+\s+)?import\s+(json|sys|re|math|collections|itertools|functools|statistics|textwrap|string|datetime|time|random|decimal|fractions|operator|typing|dataclasses|pprint|base64|hashlib|uuid|struct|binascii|unicodedata|calendar|heapq|bisect|array|enum|numbers|cmath|zlib)(\s*,\s*(json|sys|re|math|collections|itertools|functools|statistics|textwrap|string|datetime|time|random|decimal|fractions|operator|typing|dataclasses|pprint|base64|hashlib|uuid|struct|binascii|unicodedata|calendar|heapq|bisect|array|enum|numbers|cmath|zlib))*\s*(;|$)`)

// safeCalls removes the ways of reading standard input, which are the
// input's content, not a file's.
var safeCalls = strings.NewReplacer("sys.stdin.readlines()", "stdin", "sys.stdin.readline()", "stdin", "sys.stdin.read()", "stdin",
	"sys.stdin", "stdin", "process.stdin", "stdin", "json.loads(", "(", "json.load(", "(", "json.dumps(", "(")

// inline classifies code given with -c/-e: code that only computes, or
// transforms its input (json.load(sys.stdin)), prints nothing from files;
// anything that may touch a file, a program or the environment cannot be
// told.
func inline(c *call, code string) []seg {
	stripped := safeImport.ReplaceAllString(code, "")
	stripped = safeCalls.Replace(stripped)
	if fileAccess.MatchString(stripped) || isMarked(code) {
		return []seg{unknownSeg("the command runs inline %s code that may read files", c.name)}
	}
	if strings.Contains(code, "stdin") {
		return derive(c.stdin)
	}
	return []seg{{}}
}
