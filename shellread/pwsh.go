package shellread

import (
	"strings"
)

// pwshCmd follows powershell -Command SCRIPT, as Codex runs commands on
// Windows.
func pwshCmd(in *interp, c *call) []seg {
	args := c.args
	for i := 0; i < len(args); i++ {
		a := strings.ToLower(args[i])
		switch {
		case a == "-command" || a == "-c":
			if i+1 >= len(args) {
				return nil
			}
			return in.pwsh(strings.Join(args[i+1:], " "))
		case a == "-file" || a == "-f":
			return []seg{unknownSeg("the command runs a PowerShell script")}
		case a == "-encodedcommand" || a == "-e" || a == "-ec":
			return []seg{unknownSeg("the command runs an encoded PowerShell command")}
		case strings.HasPrefix(a, "-"):
			switch a {
			case "-executionpolicy", "-ep", "-windowstyle", "-workingdirectory", "-wd", "-configurationname", "-outputformat", "-inputformat", "-settingsfile":
				i++
			}
		default:
			return in.pwsh(strings.Join(args[i:], " "))
		}
	}
	return nil
}

// pwsh follows a simple PowerShell script: statements of pipelines of
// Get-Content, Select-String, Select-Object and friends. Anything else
// cannot be told.
func (in *interp) pwsh(script string) []seg {
	stmts, ok := pwshSplit(script)
	if !ok {
		return []seg{unknownSeg("the PowerShell command could not be parsed")}
	}
	var out []seg
	for _, st := range stmts {
		var stdin []seg
		fromDir := false // the previous stage lists files (Get-ChildItem)
		for _, stage := range st {
			if len(stage) == 0 {
				continue
			}
			var segs []seg
			segs, fromDir = in.pwshStage(stage, stdin, fromDir)
			stdin = segs
		}
		out = append(out, stdin...)
	}
	return out
}

func (in *interp) pwshStage(args []string, stdin []seg, fromDir bool) ([]seg, bool) {
	name := strings.ToLower(args[0])
	params, ops := pwshParams(args[1:])
	for _, k := range []string{"path", "literalpath", "lp"} {
		var split []string
		for _, v := range params[k] {
			split = append(split, strings.Split(v, ",")...)
		}
		if split != nil {
			params[k] = split
		}
	}
	switch name {
	case "get-content", "gc", "cat", "type":
		paths := append(params["path"], params["literalpath"]...)
		paths = append(append(paths, params["lp"]...), ops...)
		if len(paths) == 0 {
			return []seg{unknownSeg("Get-Content without a path")}, false
		}
		var out []seg
		for _, p := range paths {
			if strings.ContainsAny(p, "*?[") {
				return []seg{unknownSeg("Get-Content of a wildcard path")}, false
			}
			segs, v := in.readFile(p)
			if !v.ok() {
				return []seg{v.seg}, false
			}
			out = append(out, segs...)
		}
		return out, false
	case "select-object", "select", "sort-object", "sort", "where-object", "where", "?", "out-string", "out-host", "get-unique", "gu", "sort-unique":
		return stdin, false
	case "select-string", "sls":
		paths := append(params["path"], params["literalpath"]...)
		if len(ops) > 1 && params["pattern"] == nil {
			paths = append(paths, ops[1:]...)
		}
		if len(paths) == 0 && !fromDir {
			return stdin, false
		}
		n := &naming{style: linePrefix, dir: in.dir, roots: []string{"", in.dir}, numbered: true, context: params["context"] != nil}
		for _, p := range paths {
			if strings.ContainsAny(p, "*?[") {
				n.roots = append(n.roots, p[:strings.LastIndexAny(p, `\/`)+1])
				continue
			}
			segs, v := in.readFile(p)
			if !v.ok() {
				return []seg{v.seg}, false
			}
			n.files = append(n.files, p)
			for _, s := range segs {
				n.forms = append(n.forms, s.files...)
			}
		}
		if len(paths) == 1 && len(n.files) == 1 && !fromDir {
			n.single = true
		}
		return []seg{{naming: n}}, false
	case "get-childitem", "gci", "ls", "dir", "get-item", "gi", "test-path", "resolve-path", "rvpa", "get-location", "pwd", "gl":
		return []seg{{}}, name == "get-childitem" || name == "gci" || name == "ls" || name == "dir"
	case "write-output", "echo", "write", "write-host":
		return []seg{{}}, false
	case "set-location", "cd", "sl", "chdir", "push-location", "pushd":
		target := ""
		if len(ops) > 0 {
			target = ops[0]
		}
		if p := params["path"]; len(p) > 0 {
			target = p[0]
		}
		in.cd(target, true)
		return nil, false
	case "measure-object", "measure", "format-table", "ft", "format-list", "fl", "convertto-json", "convertfrom-json", "convertto-csv", "convertfrom-csv":
		return derive(stdin), false
	}
	return []seg{unknownSeg("the PowerShell command %s is not known to scrim", args[0])}, false
}

// pwshParams splits -Name value pairs (lower-cased names) from positional
// operands. Switches are taken to have no value when the next word is
// another parameter.
func pwshParams(args []string) (map[string][]string, []string) {
	params := map[string][]string{}
	var ops []string
	switches := map[string]bool{"raw": true, "force": true, "recurse": true, "simplematch": true, "casesensitive": true, "allmatches": true, "list": true, "quiet": true, "notmatch": true, "wait": true, "unique": true, "descending": true, "file": true, "directory": true, "name": true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			key := strings.ToLower(strings.TrimPrefix(a, "-"))
			if k, v, ok := strings.Cut(key, ":"); ok {
				params[k] = append(params[k], v)
				continue
			}
			if switches[key] || i+1 >= len(args) || strings.HasPrefix(args[i+1], "-") && len(args[i+1]) > 1 && !allDigits(args[i+1][1:]) {
				params[key] = append(params[key], "")
				continue
			}
			i++
			params[key] = append(params[key], args[i])
			continue
		}
		ops = append(ops, a)
	}
	return params, ops
}

// pwshSplit cuts a script into statements (; and newlines), pipelines
// (|) and words, removing quotes. A $variable, a subexpression or a script
// block makes it fail: scrim does not follow PowerShell beyond this.
func pwshSplit(s string) ([][][]string, bool) {
	var stmts [][][]string
	var pipe [][]string
	var words []string
	var w strings.Builder
	inWord := false
	endWord := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	endStage := func() {
		endWord()
		pipe = append(pipe, words)
		words = nil
	}
	endStmt := func() {
		endStage()
		if len(pipe) > 1 || len(pipe) == 1 && len(pipe[0]) > 0 {
			stmts = append(stmts, pipe)
		}
		pipe = nil
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\'':
			inWord = true
			for i++; i < len(s); i++ {
				if s[i] == '\'' {
					if i+1 < len(s) && s[i+1] == '\'' {
						w.WriteByte('\'')
						i++
						continue
					}
					break
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
		case ch == '"':
			inWord = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				switch s[i] {
				case '$':
					return nil, false
				case '`':
					i++
					if i < len(s) {
						w.WriteByte(s[i])
					}
					continue
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
		case ch == '$' || ch == '{' || ch == '}' || ch == '(' || ch == ')' || ch == '@' || ch == '`' || ch == '>' || ch == '<' || ch == '&':
			if ch == '$' && (strings.HasPrefix(strings.ToLower(s[i:]), "$null") || strings.HasPrefix(strings.ToLower(s[i:]), "$true") || strings.HasPrefix(strings.ToLower(s[i:]), "$false")) {
				inWord = true
				w.WriteByte(ch)
				continue
			}
			return nil, false
		case ch == '|':
			endStage()
		case ch == ';' || ch == '\n' || ch == '\r':
			endStmt()
		case ch == ' ' || ch == '\t':
			endWord()
		default:
			inWord = true
			w.WriteByte(ch)
		}
	}
	endStmt()
	return stmts, true
}
