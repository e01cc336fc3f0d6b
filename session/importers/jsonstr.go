package importers

import (
	"bytes"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// JSONString decodes raw, a JSON string literal taken from a line that
// encoding/json already validated, without scanning it again: tool output is
// most of a transcript's bytes, and decoding it is most of an import's work.
// ok is false when raw is not a string literal.
func JSONString(raw []byte) (s string, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	raw = raw[1 : len(raw)-1]
	i := bytes.IndexByte(raw, '\\')
	if i < 0 {
		return string(raw), true
	}
	out := make([]byte, 0, len(raw))
	for {
		out = append(out, raw[:i]...)
		raw = raw[i:]
		if len(raw) < 2 {
			return "", false
		}
		switch c := raw[1]; c {
		case '"', '\\', '/':
			out = append(out, c)
			raw = raw[2:]
		case 'b':
			out, raw = append(out, '\b'), raw[2:]
		case 'f':
			out, raw = append(out, '\f'), raw[2:]
		case 'n':
			out, raw = append(out, '\n'), raw[2:]
		case 'r':
			out, raw = append(out, '\r'), raw[2:]
		case 't':
			out, raw = append(out, '\t'), raw[2:]
		case 'u':
			r, n := unicodeEscape(raw)
			if n == 0 {
				return "", false
			}
			out, raw = utf8.AppendRune(out, r), raw[n:]
		default:
			return "", false
		}
		i = bytes.IndexByte(raw, '\\')
		if i < 0 {
			return string(append(out, raw...)), true
		}
	}
}

// unicodeEscape decodes \uXXXX (and a following low surrogate) at the start
// of b, returning the rune and the bytes used (0 when malformed).
func unicodeEscape(b []byte) (rune, int) {
	r1, ok := hex4(b)
	if !ok {
		return 0, 0
	}
	if !utf16.IsSurrogate(r1) {
		return r1, 6
	}
	if r2, ok := hex4(b[6:]); ok && len(b) >= 12 && b[6] == '\\' {
		if r := utf16.DecodeRune(r1, r2); r != utf8.RuneError {
			return r, 12
		}
	}
	return utf8.RuneError, 6
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[2:6]), 16, 32)
	return rune(n), err == nil
}
