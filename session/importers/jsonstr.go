package importers

import (
	"bytes"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// JSONString decodes raw, a JSON string literal taken from a line that
// encoding/json (or this package's readers) already validated, without
// scanning it again: tool output is most of a transcript's bytes, and
// decoding it is most of an import's work. It gives what encoding/json
// gives, bytes that are not UTF-8 decoded as U+FFFD each included. ok is
// false when raw is not a string literal; other malformed literals are not
// all caught, which is why raw must have been validated.
func JSONString(raw []byte) (s string, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	return unescape(raw[1 : len(raw)-1])
}

// unescape decodes the inside of a string literal (see JSONString).
func unescape(raw []byte) (string, bool) {
	i := bytes.IndexByte(raw, '\\')
	if i < 0 {
		return toValidUTF8(raw), true
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
			return toValidUTF8(append(out, raw...)), true
		}
	}
}

// toValidUTF8 is b as a string with each byte that is not part of valid UTF-8
// replaced by U+FFFD, as encoding/json decodes strings (and as the store
// would encode them anyway): what the importer reads from a line's text is
// then what encoding/json reads from the rest of it. An escape never makes
// bad UTF-8, so checking the decoded bytes is checking the literal's.
func toValidUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+16)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return string(out)
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
