package tomlconf

import (
	"sort"
	"strconv"
	"strings"
)

// The TOML decoder reports syntax errors with a line but does not say where a
// key or an array element is, and every problem in a config file must name
// its line. A Locator scans the source once and records the line where each
// path first appears: keys (plain, dotted, quoted, in inline tables), table
// headers, array elements and array-of-tables entries. It follows TOML's
// structure rather than guessing from text (a header inside a multi-line
// string is text), never panics, and always makes progress, so it is safe on
// any input; lines are only trusted for input that parsed.

// A path is its parts joined by pathSep; an array element is the part
// elemPrefix+index ("models", Elem(1), "tier" is models[1].tier).
const (
	pathSep    = "\x00"
	elemPrefix = "\x01"
)

// Elem is the path part of array element i (0-based). An array of tables
// counts as an array: the second [[models]] is "models", Elem(1).
func Elem(i int) string { return elemPrefix + strconv.Itoa(i) }

// A Locator says on which line of a TOML file each key is.
type Locator struct {
	lines map[string]int
	// defs lists, per path, the lines that define it: a [header], a
	// `key = value`, or the first dotted key under it after a header.
	defs map[string][]int
}

// Locate scans TOML source. A leading byte order mark is passed over, as
// the decoder does.
func Locate(src []byte) *Locator {
	s := &scanner{src: strings.TrimPrefix(string(src), "\uFEFF"), line: 1, aot: map[string]int{},
		loc: &Locator{lines: map[string]int{}, defs: map[string][]int{}}}
	s.document()
	return s.loc
}

// Line is the first line of the path, else of its nearest recorded parent,
// else 0. A toml.Key is a path: Line(key...).
func (l *Locator) Line(path ...string) int {
	for n := len(path); n > 0; n-- {
		if ln, ok := l.lines[strings.Join(path[:n], pathSep)]; ok {
			return ln
		}
	}
	return 0
}

// Has says whether the exact path was seen.
func (l *Locator) Has(path ...string) bool {
	_, ok := l.lines[strings.Join(path, pathSep)]
	return ok
}

// Defs lists the lines that define the path, first to last. TOML allows one;
// the decoder merges some second ones (dotted keys, then a [header] of the
// same table) and reports others on the second line without naming the
// first, so a config that must say "first defined on line N" asks here.
func (l *Locator) Defs(path ...string) []int {
	return l.defs[strings.Join(path, pathSep)]
}

// Keys lists the keys and tables directly under path, in file order.
func (l *Locator) Keys(path ...string) []string {
	prefix := ""
	if len(path) > 0 {
		prefix = strings.Join(path, pathSep) + pathSep
	}
	var keys []string
	for k := range l.lines {
		rest, ok := strings.CutPrefix(k, prefix)
		if ok && !strings.Contains(rest, pathSep) && !strings.HasPrefix(rest, elemPrefix) {
			keys = append(keys, rest)
		}
	}
	line := func(k string) int { return l.lines[prefix+k] }
	sort.Slice(keys, func(i, j int) bool {
		if li, lj := line(keys[i]), line(keys[j]); li != lj {
			return li < lj
		}
		return keys[i] < keys[j]
	})
	return keys
}

type scanner struct {
	src   string
	pos   int
	line  int
	table []string        // current table path
	aot   map[string]int  // array-of-tables path → entries so far
	seen  map[string]bool // tables dotted keys have defined since the header
	depth int             // nesting of arrays and inline tables
	loc   *Locator
}

// maxDepth bounds recursion on hostile input such as a megabyte of "[".
const maxDepth = 64

func (s *scanner) eof() bool { return s.pos >= len(s.src) }

func (s *scanner) peek(off int) byte {
	if s.pos+off < len(s.src) {
		return s.src[s.pos+off]
	}
	return 0
}

func (s *scanner) advance() {
	if s.src[s.pos] == '\n' {
		s.line++
	}
	s.pos++
}

// skip passes blanks, and with newlines also line breaks and comments.
func (s *scanner) skip(newlines bool) {
	for !s.eof() {
		switch c := s.src[s.pos]; {
		case c == ' ' || c == '\t' || c == '\r':
			s.pos++
		case c == '#':
			for !s.eof() && s.src[s.pos] != '\n' {
				s.pos++
			}
		case c == '\n' && newlines:
			s.advance()
		default:
			return
		}
	}
}

func (s *scanner) skipLine() {
	for !s.eof() && s.src[s.pos] != '\n' {
		s.pos++
	}
}

func (s *scanner) record(path []string, line int) {
	k := strings.Join(path, pathSep)
	if _, ok := s.loc.lines[k]; !ok {
		s.loc.lines[k] = line
	}
}

// recordAll records every prefix of path longer than from.
func (s *scanner) recordAll(path []string, from, line int) {
	for n := from + 1; n <= len(path); n++ {
		s.record(path[:n], line)
	}
}

func (s *scanner) define(path []string, line int) {
	k := strings.Join(path, pathSep)
	s.loc.defs[k] = append(s.loc.defs[k], line)
}

func (s *scanner) document() {
	s.seen = map[string]bool{}
	for {
		s.skip(true)
		if s.eof() {
			return
		}
		start := s.pos
		if s.src[s.pos] == '[' {
			s.header()
		} else {
			s.keyValue(s.table)
		}
		s.skip(false)
		s.skipLine()
		if s.pos == start && !s.eof() {
			s.advance()
		}
	}
}

// header reads [a.b] or [[a.b]] and makes it the current table.
func (s *scanner) header() {
	line := s.line
	array := s.peek(1) == '['
	s.pos++
	if array {
		s.pos++
	}
	keys := s.key()
	var path []string
	for i, k := range keys {
		path = append(path, k)
		last := i == len(keys)-1
		if n := s.aot[strings.Join(path, pathSep)]; n > 0 && !(array && last) {
			path = append(path, Elem(n-1)) // [a.b] under [[a]] means the last a
		}
	}
	if array {
		k := strings.Join(path, pathSep)
		s.record(path, line)
		path = append(path, Elem(s.aot[k]))
		s.aot[k]++
	}
	s.recordAll(path, 0, line)
	s.table = path
	s.seen = map[string]bool{}
	if !array && len(path) > 0 {
		s.define(path, line)
	}
}

// keyValue reads `key = value` inside the table at base.
func (s *scanner) keyValue(base []string) {
	line := s.line
	keys := s.key()
	if len(keys) == 0 {
		return
	}
	s.skip(false)
	if s.peek(0) != '=' {
		return
	}
	s.pos++
	s.skip(false)
	path := append(append([]string(nil), base...), keys...)
	s.recordAll(path, len(base), line)
	s.defineKeys(path, len(base), line)
	s.value(path)
}

// defineKeys records what a key path defines after its table's path (the
// first from parts): the key itself, and each table a dotted key opens the
// first time since the header (a.x = 1 then a.y = 2 define a once).
func (s *scanner) defineKeys(path []string, from, line int) {
	for n := from + 1; n <= len(path); n++ {
		k := strings.Join(path[:n], pathSep)
		if n == len(path) || !s.seen[k] {
			s.seen[k] = true
			s.define(path[:n], line)
		}
	}
}

// key reads a possibly dotted key: bare, "basic" or 'literal' parts.
func (s *scanner) key() []string {
	var parts []string
	for {
		s.skip(false)
		var part string
		switch c := s.peek(0); {
		case c == '"':
			part = unquoteBasic(s.str('"'))
		case c == '\'':
			part = strings.Trim(s.str('\''), "'")
		case isBare(c):
			start := s.pos
			for !s.eof() && isBare(s.src[s.pos]) {
				s.pos++
			}
			part = s.src[start:s.pos]
		default:
			return parts
		}
		parts = append(parts, part)
		s.skip(false)
		if s.peek(0) != '.' {
			return parts
		}
		s.pos++
	}
}

func isBare(c byte) bool {
	return c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// str reads a string starting with quote q (single- or multi-line) and
// returns its raw text, quotes included.
func (s *scanner) str(q byte) string {
	start := s.pos
	multi := s.peek(1) == q && s.peek(2) == q
	if multi {
		s.pos += 3
	} else {
		s.pos++
	}
	for !s.eof() {
		c := s.src[s.pos]
		switch {
		case c == '\\' && q == '"' && s.pos+1 < len(s.src):
			s.pos++
			s.advance()
		case c == '\n' && !multi:
			return s.src[start:s.pos]
		case c == q && !multi:
			s.pos++
			return s.src[start:s.pos]
		case c == q && s.peek(1) == q && s.peek(2) == q:
			s.pos += 3
			for i := 0; i < 2 && s.peek(0) == q; i++ { // """a"""" ends in a quote
				s.pos++
			}
			return s.src[start:s.pos]
		default:
			s.advance()
		}
	}
	return s.src[start:s.pos]
}

func unquoteBasic(raw string) string {
	if u, err := strconv.Unquote(raw); err == nil {
		return u
	}
	return strings.Trim(raw, `"`)
}

// value reads any value at path, recording array elements and inline-table keys.
func (s *scanner) value(path []string) {
	if s.depth > maxDepth {
		s.scalar()
		return
	}
	s.depth++
	defer func() { s.depth-- }()
	switch c := s.peek(0); c {
	case '"', '\'':
		s.str(c)
	case '[':
		i := 0
		s.items(']', func() {
			p := append(append([]string(nil), path...), Elem(i))
			s.record(p, s.line)
			s.value(p)
			i++
		})
	case '{':
		s.items('}', func() { s.keyValue(path) })
	default:
		s.scalar()
	}
}

// items reads the comma-separated items of an array or inline table, up to
// end, with item; it passes a byte that item does not, to make progress.
func (s *scanner) items(end byte, item func()) {
	s.pos++
	for {
		s.skip(true)
		if s.eof() {
			return
		}
		switch s.src[s.pos] {
		case end:
			s.pos++
			return
		case ',':
			s.pos++
			continue
		}
		start := s.pos
		item()
		if s.pos == start {
			s.advance()
		}
	}
}

// scalar passes a number, boolean or date-time ("1979-05-27 07:32:00" has a space).
func (s *scanner) scalar() {
	start := s.pos
	for !s.eof() && !strings.ContainsRune(" \t\r\n,]}#", rune(s.src[s.pos])) {
		s.pos++
	}
	if s.pos-start == 10 && s.src[start+4] == '-' && s.peek(0) == ' ' && '0' <= s.peek(1) && s.peek(1) <= '9' {
		s.pos++
		s.scalar()
	}
}
