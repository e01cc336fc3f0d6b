package runner

import (
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// locator finds the line of a key in TOML source. The decoder does not expose
// key positions, and every providers.toml error must name a line.
type locator struct {
	keys map[string]int // "providers.ollama.type" → first line (1-based); tables too
}

func newLocator(data []byte) *locator {
	l := &locator{keys: map[string]int{}}
	table := ""
	for i, raw := range strings.Split(string(data), "\n") {
		s := strings.TrimSpace(raw)
		n := i + 1
		switch {
		case s == "" || strings.HasPrefix(s, "#"):
		case strings.HasPrefix(s, "["):
			inner := strings.TrimPrefix(strings.TrimPrefix(s, "["), "[")
			end := strings.Index(inner, "]")
			if end < 0 {
				continue
			}
			table = normKey(inner[:end])
			l.add(table, n)
		default:
			eq := keyEnd(s)
			if eq <= 0 {
				continue
			}
			k := normKey(s[:eq])
			if table != "" {
				k = table + "." + k
			}
			l.add(k, n)
		}
	}
	return l
}

// add records a key and its parents (a dotted key defines its tables).
func (l *locator) add(key string, line int) {
	for {
		if _, ok := l.keys[key]; !ok {
			l.keys[key] = line
		}
		i := strings.LastIndex(key, ".")
		if i < 0 {
			return
		}
		key = key[:i]
	}
}

// keyEnd is the index of the '=' that ends a key, skipping quoted parts.
func keyEnd(s string) int {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '=':
			return i
		}
	}
	return -1
}

// normKey turns `providers . "my gw"` into `providers.my gw`.
func normKey(s string) string {
	var parts []string
	var b strings.Builder
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
			b.WriteByte(c)
		case quote != 0:
			b.WriteByte(c)
		case c == '"' || c == '\'':
			quote = c
			b.WriteByte(c)
		case c == '.':
			parts = append(parts, unquote(b.String()))
			b.Reset()
		default:
			b.WriteByte(c)
		}
	}
	parts = append(parts, unquote(b.String()))
	return strings.Join(parts, ".")
}

func unquote(p string) string {
	p = strings.TrimSpace(p)
	if uq, err := strconv.Unquote(p); err == nil {
		return uq
	}
	return strings.Trim(p, "'")
}

// keyLine is the line of a key, or of the nearest enclosing key or table.
func (l *locator) keyLine(k toml.Key) int {
	for n := len(k); n > 0; n-- {
		if line, ok := l.keys[strings.Join(k[:n], ".")]; ok {
			return line
		}
	}
	return 0
}
