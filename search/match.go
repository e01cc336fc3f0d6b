package search

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/scrim-dev/scrim/session"
)

// matcher finds a query in text, and tells from a message's stored bytes
// whether it can be in the message at all.
type matcher struct {
	re *regexp.Regexp
	// lit is a literal query that find looks for byte by byte, upper-cased
	// when fold: a query whose every rune is ASCII. A match is then the
	// query's bytes up to ASCII case, exactly where RE2's (?i) finds it,
	// in any text without a rune that is the same letter as one of the
	// query's in another case and not ASCII: the Kelvin sign (K) and the
	// long s (S), the only two (kelvinS: the query holds a k or an s, and
	// a text that holds either goes to RE2). "" otherwise.
	lit     string
	kelvinS bool
	// needle is what the stored bytes of a message that matches must
	// contain: the query as the store escapes it, case-folded when fold.
	// nil when no such test is known (a regular expression): every message
	// is decoded.
	needle []byte
	fold   bool // compare case-folded stored bytes with needle
}

// newMatcher compiles query: a literal, or with regex an RE2 expression.
// Smart case, as ripgrep's: a query without an upper-case letter matches
// regardless of case (RE2's (?i): runes that are the same letter in
// another case, K and the Kelvin sign included).
func newMatcher(query string, regex bool) (*matcher, error) {
	if query == "" {
		return nil, queryError{fmt.Errorf("the query is empty")}
	}
	fold := !hasUpper(query)
	expr := query
	if !regex {
		expr = regexp.QuoteMeta(query)
	}
	if fold {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		if _, perr := syntax.Parse(query, syntax.Perl); perr != nil {
			err = perr // what the user wrote, not the (?i) smart case put before it
		}
		return nil, queryError{fmt.Errorf("bad regular expression %q: %w", query, err)}
	}
	m := &matcher{re: re, fold: fold}
	if !regex {
		m.lit, m.kelvinS = asciiLiteral(query)
	}
	if m.lit != "" && fold {
		m.lit = string(foldBytes(nil, []byte(query)))
	}
	// The store writes invalid UTF-8 as the escape \ufffd, which decodes
	// to U+FFFD; a query holding U+FFFD is matched on decoded text only.
	if !regex && !strings.ContainsRune(query, utf8.RuneError) {
		quoted := session.AppendJSONString(nil, query)
		m.needle = quoted[1 : len(quoted)-1]
		if fold {
			m.needle = foldBytes(nil, m.needle)
		}
	}
	return m, nil
}

// queryError is a query that cannot be searched for: the asker's mistake.
type queryError struct{ error }

func (e queryError) Unwrap() error { return e.error }

// IsQueryError reports whether err says the query itself is wrong (empty,
// or not a regular expression).
func IsQueryError(err error) bool {
	var qe queryError
	return errors.As(err, &qe)
}

// Pattern is the regular expression a search for query matches text
// with, for a view that marks the matches.
func Pattern(query string, regex bool) (*regexp.Regexp, error) {
	m, err := newMatcher(query, regex)
	if err != nil {
		return nil, err
	}
	return m.re, nil
}

func hasUpper(s string) bool {
	for _, r := range s {
		if unicode.IsUpper(r) {
			return true
		}
	}
	return false
}

// mayMatch reports whether the stored record v can hold a match. It never
// says no to a record that does: the store escapes one rune at a time, and
// case folding leaves the runes it escapes (quotes, backslashes, <>&,
// control characters) alone, so folding the escaped record and folding the
// escaped query agree with escaping the folded text. It may say yes to a
// record that does not match, which find then settles. buf is scratch
// space kept between calls.
func (m *matcher) mayMatch(v []byte, buf *[]byte) bool {
	if m.needle == nil {
		return true
	}
	if !m.fold {
		return bytes.Contains(v, m.needle)
	}
	if m.lit != "" && !m.otherCases(v) {
		// The query's other cases in the record are ASCII, as are the
		// escapes: the record is searched as it is, without folding a
		// copy of it (a tenth of the CPU of a search of a million
		// messages).
		return indexFold(v, string(m.needle)) >= 0
	}
	*buf = foldBytes((*buf)[:0], v)
	return bytes.Contains(*buf, m.needle)
}

// foldBytes appends b with every rune replaced by the smallest rune of its
// case-folding orbit (K for k and the Kelvin sign, S for s and ſ): two runes
// match regardless of case exactly when these agree. ASCII, most of any
// record, takes the short way.
func foldBytes(dst, b []byte) []byte {
	last, lastFold := rune(-1), rune(-1) // runes repeat (→ on every line of a read)
	for i := 0; i < len(b); {
		start := i
		for i < len(b) && b[i] < utf8.RuneSelf {
			i++
		}
		at := len(dst)
		dst = append(dst, b[start:i]...)
		for k, c := range dst[at:] {
			dst[at+k] = upperASCII[c]
		}
		if i == len(b) {
			break
		}
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, b[i])
		case r == last:
			dst = utf8.AppendRune(dst, lastFold)
		default:
			last, lastFold = r, foldRune(r)
			dst = utf8.AppendRune(dst, lastFold)
		}
		i += size
	}
	return dst
}

// upperASCII maps each ASCII byte to its upper case, the least of its
// case-folding orbit.
var upperASCII = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		t[c] = byte(c)
		if 'a' <= c && c <= 'z' {
			t[c] -= 'a' - 'A'
		}
	}
	return t
}()

func foldRune(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}

// asciiLiteral returns s if every rune of it is ASCII ("" if not), and
// whether one of them is the same letter in another case as a rune past
// ASCII: the Kelvin sign and the long s are, of k and s, and no other is
// of any ASCII letter (TestOnlyKelvinAndLongS).
func asciiLiteral(s string) (lit string, kelvinS bool) {
	for _, r := range s {
		if r >= utf8.RuneSelf {
			return "", false
		}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f >= utf8.RuneSelf {
				kelvinS = true
			}
		}
	}
	return s, kelvinS
}

// otherCases reports whether text may hold the query in a case that is
// not ASCII: the query holds a k or an s, and text the Kelvin sign or the
// long s.
func (m *matcher) otherCases(text []byte) bool {
	return m.fold && m.kelvinS && (bytes.Contains(text, kelvinSign) || bytes.Contains(text, longS))
}

var kelvinSign, longS = []byte("\u212a"), []byte("\u017f")

// find returns where the query matches s, at most limit matches (all for
// a negative limit), leftmost first, as regexp's FindAllStringIndex.
func (m *matcher) find(s string, limit int) [][]int {
	if m.lit == "" || m.otherCases(unsafe.Slice(unsafe.StringData(s), len(s))) {
		return m.re.FindAllStringIndex(s, limit)
	}
	// A literal's matches do not overlap: the next is looked for after
	// the last. By hand, as no library finds a string regardless of case
	// and says where: RE2's (?i) matcher ran a backtracker over every
	// part that held the query, 4.3 s of a 12.7 s search of a million
	// messages for a word in a fifth of them (BenchmarkLiteralFind).
	var out [][]int
	for at := 0; limit < 0 || len(out) < limit; {
		k := m.index(s[at:])
		if k < 0 {
			break
		}
		out = append(out, []int{at + k, at + k + len(m.lit)})
		at += k + len(m.lit)
	}
	return out
}

// index is where m.lit first is in s, regardless of ASCII case when m.fold;
// -1 if it is not.
func (m *matcher) index(s string) int {
	if !m.fold {
		return strings.Index(s, m.lit)
	}
	return indexFold(s, m.lit)
}

// indexFold is where upper, upper-cased ASCII, first is in s regardless of
// ASCII case; -1 if it is not.
func indexFold[T string | []byte](s T, upper string) int {
	if upper == "" {
		return 0
	}
	first := upper[0]
	for i := 0; i+len(upper) <= len(s); i++ {
		if s[i] < utf8.RuneSelf && upperASCII[s[i]] == first && equalFoldASCII(s[i+1:i+len(upper)], upper[1:]) {
			return i
		}
	}
	return -1
}

// equalFoldASCII reports whether s upper-cased in ASCII is upper, which
// is upper-cased ASCII.
func equalFoldASCII[T string | []byte](s T, upper string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf || upperASCII[s[i]] != upper[i] {
			return false
		}
	}
	return true
}
