package importers

import "bytes"

// Members calls fn with each member of the JSON object obj (key as written,
// without quotes, and the raw value) until fn returns false. It is a fast,
// lenient reader for lines encoding/json has not checked: strings are
// skipped with IndexByte, not validated. ok is false when obj does not have
// the shape of an object.
func Members(obj []byte, fn func(key, val []byte, start, end int) bool) (ok bool) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return true
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
		vend, ok := SkipValue(obj, vstart)
		if !ok {
			return false
		}
		if !fn(key, obj[vstart:vend], start, vend) {
			return true
		}
		i = skipSpace(obj, vend)
		if i >= len(obj) {
			return false
		}
		switch obj[i] {
		case ',':
			i = skipSpace(obj, i+1)
		case '}':
			return true
		default:
			return false
		}
	}
	return false
}

// SkipValue returns the end of the JSON value starting at b[i].
func SkipValue(b []byte, i int) (end int, ok bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				e, ok := skipString(b, i)
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

// skipString returns the end (after the closing quote) of the string at
// b[i]. A quote ends the string unless an odd number of backslashes precede
// it; IndexByte finds quotes much faster than a byte loop finds both.
func skipString(b []byte, i int) (int, bool) {
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

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// CutMember returns obj without its top-level member key, and that member's
// value (nil when obj has none). ok is false when obj is not read as an
// object; callers then decode it whole.
func CutMember(obj []byte, key string) (rest, val []byte, ok bool) {
	prevEnd := -1 // end of the previous member's value
	var a, b int
	found := false
	ok = Members(obj, func(k, v []byte, start, end int) bool {
		if string(k) == key {
			val, found = v, true
			if prevEnd >= 0 {
				a, b = prevEnd, end // drop ",member"
			} else {
				a, b = start, end // first member: drop "member," below
			}
			return false
		}
		prevEnd = end
		return true
	})
	if !ok || !found {
		return obj, nil, ok
	}
	if prevEnd < 0 {
		j := skipSpace(obj, b)
		if j < len(obj) && obj[j] == ',' {
			b = j + 1
		}
	}
	rest = make([]byte, 0, len(obj)-(b-a))
	rest = append(append(rest, obj[:a]...), obj[b:]...)
	return rest, val, true
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
		return []string{}, true
	}
	for i < len(raw) {
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
