package policy

import (
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// locator finds the line of a key or value in the policy source. The TOML
// decoder does not expose key positions, and every load error must name a line.
type locator struct {
	lines      []string
	keys       map[string]int   // "tiers.cloud.deny" → first line (1-based)
	tables     map[string][]int // "tiers.cloud" → lines of each [header]
	arrayTable map[string][]int // "models" → line of each [[models]]
}

func newLocator(data []byte) *locator {
	l := &locator{
		lines:      strings.Split(string(data), "\n"),
		keys:       map[string]int{},
		tables:     map[string][]int{},
		arrayTable: map[string][]int{},
	}
	table := ""
	for i, raw := range l.lines {
		s := strings.TrimSpace(raw)
		n := i + 1
		switch {
		case strings.HasPrefix(s, "[["):
			end := strings.Index(s, "]]")
			if end < 0 {
				continue
			}
			table = normKey(s[2:end])
			l.arrayTable[table] = append(l.arrayTable[table], n)
		case strings.HasPrefix(s, "["):
			end := strings.Index(s, "]")
			if end < 0 {
				continue
			}
			table = normKey(s[1:end])
			l.tables[table] = append(l.tables[table], n)
		default:
			eq := strings.Index(s, "=")
			if eq <= 0 || strings.HasPrefix(s, "#") || strings.HasPrefix(s, "\"") && !strings.Contains(s[:eq], "\"") {
				continue
			}
			k := normKey(s[:eq])
			if k == "" {
				continue
			}
			if table != "" {
				k = table + "." + k
			}
			if _, ok := l.keys[k]; !ok {
				l.keys[k] = n
			}
		}
	}
	return l
}

// normKey turns `tiers . "my tier"` into `tiers.my tier`.
func normKey(s string) string {
	parts := strings.Split(s, ".")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if uq, err := strconv.Unquote(p); err == nil {
			p = uq
		} else {
			p = strings.Trim(p, "'")
		}
		parts[i] = p
	}
	return strings.Join(parts, ".")
}

// keyLine is the line of a key, or of the nearest enclosing table that has one.
func (l *locator) keyLine(k toml.Key) int {
	for n := len(k); n > 0; n-- {
		name := strings.Join(k[:n], ".")
		if line, ok := l.keys[name]; ok {
			return line
		}
		if lines := l.tables[name]; len(lines) > 0 {
			return lines[0]
		}
		if lines := l.arrayTable[name]; len(lines) > 0 {
			// An unknown key in some [[name]] table: find the first table that has it.
			if n < len(k) {
				for _, tl := range lines {
					if line := l.lineInTable(tl, k[n]); line != tl {
						return line
					}
				}
			}
			return lines[0]
		}
	}
	return 0
}

func (l *locator) tableLine(name string) int {
	if lines := l.tables[name]; len(lines) > 0 {
		return lines[0]
	}
	// A tier written as dotted keys (tiers.x.label = ...) has no header.
	for k, line := range l.keys {
		if strings.HasPrefix(k, name+".") {
			return line
		}
	}
	return 0
}

func (l *locator) arrayTableLine(name string, i int) int {
	if lines := l.arrayTable[name]; i < len(lines) {
		return lines[i]
	}
	return l.keys[name]
}

// lineInTable finds `key =` after a table header and before the next header.
func (l *locator) lineInTable(tableLine int, key string) int {
	for i := tableLine; i < len(l.lines); i++ {
		s := strings.TrimSpace(l.lines[i])
		if strings.HasPrefix(s, "[") {
			break
		}
		if eq := strings.Index(s, "="); eq > 0 && normKey(s[:eq]) == key {
			return i + 1
		}
	}
	return tableLine
}

// valueLine finds the line of a string value of an array key; arrays may span lines.
// A value repeated in the same array points at its first occurrence.
func (l *locator) valueLine(key, value string) int {
	start, ok := l.keys[key]
	if !ok {
		return l.tableLine(key[:strings.LastIndex(key, ".")])
	}
	quoted := []string{strconv.Quote(value), "'" + value + "'", `"` + value + `"`}
	for n := start - 1; n < len(l.lines); n++ {
		s := strings.TrimSpace(l.lines[n])
		if n > start-1 && (strings.HasPrefix(s, "[") && !strings.HasPrefix(s, "[\"") || strings.Contains(s, "=") && !strings.ContainsAny(s[:strings.Index(s, "=")], "\"'")) {
			break
		}
		for _, q := range quoted {
			if strings.Contains(s, q) {
				return n + 1
			}
		}
	}
	return start
}

type dupTier struct {
	name string
	line int
}

func (l *locator) duplicateTier() dupTier {
	for name, lines := range l.tables {
		if strings.HasPrefix(name, "tiers.") && strings.Count(name, ".") == 1 && len(lines) > 1 {
			return dupTier{strings.TrimPrefix(name, "tiers."), lines[1]}
		}
	}
	return dupTier{}
}
