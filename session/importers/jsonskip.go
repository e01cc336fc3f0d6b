package importers

import "bytes"

// The readers here walk a transcript line (or a JSON text inside one) by
// hand so that the bulk of it, a tool's output, is skipped rather than
// decoded. They must accept exactly what encoding/json accepts: a part they
// skip is never seen by encoding/json, so a reader that only looked for the
// closing quote or bracket would take in lines encoding/json rejects as
// malformed, and the importer would store what such a line seems to say.
// Everything they step over is therefore checked against encoding/json's
// grammar (strings, escapes, numbers, literals, commas and colons, nesting
// depth); only UTF-8 inside strings is not, as encoding/json does not
// reject it either (it decodes bad bytes as U+FFFD, as JSONString does).

// maxDepth is encoding/json's nesting limit: a text with more than this many
// objects and arrays open at once is a syntax error.
const maxDepth = 10000

// Members calls fn with each member of the JSON object obj (the key as
// written between its quotes, escapes not decoded: see KeyIs; and the raw
// value) until fn returns false. obj is read as encoding/json reads a whole
// text: fn sees a member only once its key, its value and the comma or
// brace after it are valid, and ok is false as soon as anything read is
// not, or when obj is not an object. When fn stops the walk ok is true and
// the rest of obj is not read; a walk to the end also requires nothing but
// white space after the object.
func Members(obj []byte, fn func(key, val []byte, start, end int) bool) (ok bool) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return skipSpace(obj, i+1) == len(obj)
	}
	for i < len(obj) {
		start := i
		if obj[i] != '"' {
			return false
		}
		kend, ok := skipString(obj, i)
		if !ok {
			return false
		}
		key := obj[i+1 : kend-1]
		i = skipSpace(obj, kend)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		vstart := skipSpace(obj, i+1)
		vend, ok := skipValue(obj, vstart, 1)
		if !ok {
			return false
		}
		// The byte after the value is checked before fn sees it: a value
		// is only whole when a delimiter ends it ("01" is not the number 0).
		i = skipSpace(obj, vend)
		if i >= len(obj) || (obj[i] != ',' && obj[i] != '}') {
			return false
		}
		if !fn(key, obj[vstart:vend], start, vend) {
			return true
		}
		if obj[i] == '}' {
			return skipSpace(obj, i+1) == len(obj)
		}
		i = skipSpace(obj, i+1)
	}
	return false
}

// KeyIs reports whether key, as Members passes it, names the struct field
// name the way encoding/json matches a member to a field: after decoding
// its escapes, ignoring case (bytes.EqualFold, which encoding/json's folding
// matches). Only one field of the structs decoded here folds to each name.
func KeyIs(key []byte, name string) bool {
	if bytes.IndexByte(key, '\\') < 0 {
		return bytes.EqualFold(key, []byte(name))
	}
	s, ok := unescape(key)
	return ok && bytes.EqualFold([]byte(s), []byte(name))
}

// SkipValue returns the end of the JSON value starting at b[i], checking it
// as encoding/json would check a whole text. The caller checks what follows
// the value (a number or literal ends at the first byte that cannot
// continue it).
func SkipValue(b []byte, i int) (end int, ok bool) { return skipValue(b, i, 0) }

// skipValue is SkipValue for a value inside depth open objects and arrays.
func skipValue(b []byte, i, depth int) (end int, ok bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{':
		return skipObject(b, i, depth+1)
	case c == '[':
		return skipArray(b, i, depth+1)
	case c == '-' || '0' <= c && c <= '9':
		return skipNumber(b, i)
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	}
	return 0, false
}

// skipObject skips the object at b[i], the depth-th container open.
func skipObject(b []byte, i, depth int) (int, bool) {
	if depth > maxDepth {
		return 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	var ok bool
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		if i, ok = skipString(b, i); !ok {
			return 0, false
		}
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		if i, ok = skipValue(b, skipSpace(b, i+1), depth); !ok {
			return 0, false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case '}':
			return i + 1, true
		case ',':
			i = skipSpace(b, i+1)
		default:
			return 0, false
		}
	}
}

// skipArray skips the array at b[i], the depth-th container open.
func skipArray(b []byte, i, depth int) (int, bool) {
	if depth > maxDepth {
		return 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	var ok bool
	for {
		if i, ok = skipValue(b, i, depth); !ok {
			return 0, false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ']':
			return i + 1, true
		case ',':
			i = skipSpace(b, i+1)
		default:
			return 0, false
		}
	}
}

// skipString returns the end (after the closing quote) of the string at
// b[i]: no control characters, only JSON's escapes. A byte loop over a
// table: crossing plain runs eight bytes at a time was tried and measured no
// faster on a whole import (Claude Code 168–174 MB/s byte by byte,
// 162–170 with it).
func skipString(b []byte, i int) (int, bool) {
	i++
	for {
		for i < len(b) && !stringStop[b[i]] {
			i++
		}
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case '"':
			return i + 1, true
		case '\\':
			if i+1 >= len(b) {
				return 0, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return 0, false
				}
				i += 6
			default:
				return 0, false
			}
		default: // a control character
			return 0, false
		}
	}
}

// stringStop marks the bytes that end a run of plain bytes in a string: a
// quote, a backslash or a control character (which JSON does not allow
// there). Bytes from 0x80 up are plain: encoding/json does not check UTF-8.
var stringStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// skipNumber returns the end of the number at b[i] by JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func skipNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = skipDigits(b, i+1)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := skipDigits(b, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

func skipLiteral(b []byte, i int, lit string) (int, bool) {
	if !bytes.HasPrefix(b[i:], []byte(lit)) {
		return 0, false
	}
	return i + len(lit), true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// ValidMembers is Members for an object already checked as encoding/json
// checks it (a value CutMember returned). It checks nothing again: a string
// is crossed by looking for its closing quote alone (IndexByte), which on
// valid JSON finds the same end as skipString at a fraction of its cost, and
// a container by counting brackets. What it reads from anything but valid
// JSON is meaningless (it never panics, though).
func ValidMembers(obj []byte, fn func(key, val []byte) bool) {
	validMembers(obj, func(k, v []byte, _, _ int) bool { return fn(k, v) })
}

// validMembers is ValidMembers passing each member's start and end as
// Members does; ok is false when the walk stops on something that is not a
// member, and when it runs off the end of obj.
func validMembers(obj []byte, fn func(key, val []byte, start, end int) bool) (ok bool) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return true
	}
	for i < len(obj) && obj[i] == '"' {
		start := i
		kend, ok := skipValidString(obj, i)
		if !ok {
			return false
		}
		i = skipSpace(obj, kend)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		vstart := skipSpace(obj, i+1)
		vend, ok := skipValidValue(obj, vstart)
		if !ok {
			return false
		}
		if !fn(obj[start+1:kend-1], obj[vstart:vend], start, vend) {
			return true
		}
		i = skipSpace(obj, vend)
		if i >= len(obj) {
			return false
		}
		switch obj[i] {
		case '}':
			return true
		case ',':
			i = skipSpace(obj, i+1)
		default:
			return false
		}
	}
	return false
}

// ValidElements calls fn with each element of the JSON array arr, already
// checked as encoding/json checks it (see ValidMembers), until fn returns
// false. ok is false when arr is not read as an array.
func ValidElements(arr []byte, fn func(v []byte) bool) (ok bool) {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return false
	}
	i = skipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return true
	}
	for i < len(arr) {
		end, ok := skipValidValue(arr, i)
		if !ok {
			return false
		}
		if !fn(arr[i:end]) {
			return true
		}
		i = skipSpace(arr, end)
		if i >= len(arr) {
			return false
		}
		switch arr[i] {
		case ']':
			return true
		case ',':
			i = skipSpace(arr, i+1)
		default:
			return false
		}
	}
	return false
}

// skipValidValue is skipValue for valid JSON (see ValidMembers).
func skipValidValue(b []byte, i int) (end int, ok bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return skipValidString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				e, ok := skipValidString(b, i)
				if !ok {
					return 0, false
				}
				i = e
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	default: // number, true, false, null
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && !isSpace(b[j]) {
			j++
		}
		return j, j > i
	}
}

// skipValidString is skipString for a valid string: a quote ends it unless
// an odd number of backslashes precede it.
func skipValidString(b []byte, i int) (int, bool) {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return 0, false
		}
		i += j
		n := 0
		for k := i - 1; k >= 0 && b[k] == '\\'; k-- {
			n++
		}
		i++
		if n%2 == 0 {
			return i, true
		}
	}
}

// CutMember returns obj without its top-level member key, and that member's
// value (nil when obj has none). The member is the first whose key
// encoding/json would match to a field named key (KeyIs), so that decoding
// rest into a struct that already holds val's reading gives what
// encoding/json gives for obj, later duplicates included.
//
// When a member is cut, rest is valid JSON exactly when obj is: the cut
// member, val included, is checked as encoding/json checks it (by
// checkMember; encoding/json, decoding rest, never sees it), and what stays
// in rest is left to encoding/json. The members before it are therefore
// crossed as ValidMembers crosses them: on a valid obj that finds their
// ends, and on an invalid one what it misreads stays in rest (the cut
// member is whole and sits between two members or a member and a brace,
// so taking it out cannot mend what is around it). ok is false when obj
// is not read as an object or the member is not valid; callers then decode
// obj whole, and encoding/json reports why.
func CutMember(obj []byte, key string) (rest, val []byte, ok bool) {
	prevEnd := -1 // end of the previous member's value
	start, end := -1, -1
	ok = validMembers(obj, func(k, v []byte, s, e int) bool {
		if KeyIs(k, key) {
			val, start, end = v, s, e
			return false
		}
		prevEnd = e
		return true
	})
	if !ok || start < 0 {
		return obj, nil, ok
	}
	if !checkMember(obj, start, end) {
		return obj, nil, false
	}
	a, b := prevEnd, end // drop ",member"
	if prevEnd < 0 {
		a = start // the first member: drop "member," if a member follows
		if j := skipSpace(obj, b); obj[j] == ',' {
			b = j + 1
			// Dropping "member," would turn a trailing comma, which
			// encoding/json rejects, into a valid "{}".
			if j = skipSpace(obj, b); j >= len(obj) || obj[j] != '"' {
				return obj, nil, false
			}
		}
	}
	rest = make([]byte, 0, len(obj)-(b-a))
	rest = append(append(rest, obj[:a]...), obj[b:]...)
	return rest, val, true
}

// checkMember reports whether the member of a top-level object from
// obj[start] (its key's quote) to obj[end] (its value's end) is valid JSON,
// and followed by a comma or the object's closing brace.
func checkMember(obj []byte, start, end int) bool {
	i, ok := skipString(obj, start)
	if !ok {
		return false
	}
	if i = skipSpace(obj, i); i >= len(obj) || obj[i] != ':' {
		return false
	}
	// A strict reading ends where the walk's did unless the value is not
	// valid: "01" reads as the number 0 followed by a stray 1.
	if i, ok = skipValue(obj, skipSpace(obj, i+1), 1); !ok || i != end {
		return false
	}
	i = skipSpace(obj, end)
	return i < len(obj) && (obj[i] == ',' || obj[i] == '}')
}

// Strings reads a JSON array of strings (a command's argv) without
// encoding/json; ok is false for anything else.
func Strings(raw []byte) (out []string, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return []string{}, skipSpace(raw, i+1) == len(raw)
	}
	for i < len(raw) {
		if raw[i] != '"' {
			return nil, false
		}
		end, ok := skipString(raw, i)
		if !ok {
			return nil, false
		}
		s, ok := JSONString(raw[i:end])
		if !ok {
			return nil, false
		}
		out = append(out, s)
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case ']':
			return out, skipSpace(raw, i+1) == len(raw)
		default:
			return nil, false
		}
	}
	return nil, false
}
