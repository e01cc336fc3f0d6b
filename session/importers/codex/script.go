package codex

import (
	"strconv"
	"strings"
)

// scriptCommands finds the commands a code-mode script (the JavaScript of
// an exec call) runs: each tools.exec_command({cmd, workdir}) and
// tools.shell_command({command, workdir}). The script's own code has no
// file access; only its tools read. A command that is not a literal, or a
// call to a tool that may read anything, makes the script's output of
// unknown source, with the reason.
func scriptCommands(js string) ([]command, string) {
	var out []command
	for i := 0; ; {
		k := strings.Index(js[i:], "tools.")
		if k < 0 {
			return out, ""
		}
		i += k + len("tools.")
		j := i
		for j < len(js) && (isIdent(js[j]) || js[j] == '$') {
			j++
		}
		name := js[i:j]
		rest := strings.TrimLeft(js[j:], " \t\n")
		if !strings.HasPrefix(rest, "(") {
			continue // tools.x mentioned, not called
		}
		switch name {
		case "apply_patch", "update_plan", "view_image", "list_dir":
			continue
		case "exec_command", "shell_command", "unified_exec":
		default:
			return nil, "the code-mode script calls tools." + name + ", which may read anything"
		}
		fields, ok := objectLiteral(rest[1:])
		if !ok {
			return nil, "the code-mode script computes the command it runs"
		}
		key := "cmd"
		if name == "shell_command" {
			key = "command"
		}
		line, ok := fields[key]
		if !ok || line.computed {
			return nil, "the code-mode script computes the command it runs"
		}
		wd := fields["workdir"]
		if wd.computed {
			return nil, "the code-mode script computes the folder a command runs in"
		}
		out = append(out, command{Line: line.s, Workdir: wd.s})
	}
}

// jsValue is a property's value: a string literal, or something computed.
type jsValue struct {
	s        string
	computed bool
}

// objectLiteral reads the properties of the object literal at the start of
// s (after its call's parenthesis).
func objectLiteral(s string) (map[string]jsValue, bool) {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return nil, false
	}
	i++
	out := map[string]jsValue{}
	for {
		i = skipSpace(s, i)
		if i >= len(s) {
			return nil, false
		}
		if s[i] == '}' {
			return out, true
		}
		var key string
		switch {
		case s[i] == '"' || s[i] == '\'':
			k, n, ok := jsString(s[i:])
			if !ok {
				return nil, false
			}
			key, i = k, i+n
		case isIdent(s[i]):
			j := i
			for j < len(s) && isIdent(s[j]) {
				j++
			}
			key, i = s[i:j], j
		default:
			return nil, false
		}
		i = skipSpace(s, i)
		if i >= len(s) {
			return nil, false
		}
		if s[i] != ':' {
			out[key] = jsValue{computed: true} // {cmd}: shorthand for a variable
		} else {
			i = skipSpace(s, i+1)
			if i < len(s) && (s[i] == '"' || s[i] == '\'' || s[i] == '`') {
				v, n, ok := jsString(s[i:])
				if !ok {
					return nil, false
				}
				j := skipSpace(s, i+n)
				if j < len(s) && (s[j] == ',' || s[j] == '}') {
					out[key], i = jsValue{s: v}, j
				} else {
					out[key], i = jsValue{computed: true}, skipExpr(s, i)
				}
			} else {
				out[key], i = jsValue{computed: true}, skipExpr(s, i)
			}
		}
		i = skipSpace(s, i)
		if i < len(s) && s[i] == ',' {
			i++
		}
	}
}

// skipExpr skips an expression up to the ',' or '}' that ends it.
func skipExpr(s string, i int) int {
	depth := 0
	for i < len(s) {
		switch c := s[i]; c {
		case '"', '\'', '`':
			_, n, ok := jsString(s[i:])
			if !ok {
				return len(s)
			}
			i += n
			continue
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				return i
			}
			depth--
		case ',':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return i
}

// jsString reads a string literal; a template with ${…} is not a literal.
func jsString(s string) (string, int, bool) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			return b.String(), i + 1, true
		case c == '\\' && i+1 < len(s):
			i++
			switch e := s[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case 'u':
				if i+4 < len(s) {
					if r, err := strconv.ParseUint(s[i+1:i+5], 16, 32); err == nil {
						b.WriteRune(rune(r))
						i += 4
						continue
					}
				}
				b.WriteByte(e)
			case 'x':
				if i+2 < len(s) {
					if r, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
						b.WriteByte(byte(r))
						i += 2
						continue
					}
				}
				b.WriteByte(e)
			case '\n':
			default:
				b.WriteByte(e)
			}
		case q == '`' && c == '$' && i+1 < len(s) && s[i+1] == '{':
			return "", 0, false
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false
}

func skipSpace(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		case '/':
			if strings.HasPrefix(s[i:], "//") {
				j := strings.IndexByte(s[i:], '\n')
				if j < 0 {
					return len(s)
				}
				i += j
				continue
			}
			if strings.HasPrefix(s[i:], "/*") {
				j := strings.Index(s[i+2:], "*/")
				if j < 0 {
					return len(s)
				}
				i += j + 4
				continue
			}
			return i
		default:
			return i
		}
	}
	return i
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
