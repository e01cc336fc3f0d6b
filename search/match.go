package search

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/scrim-dev/scrim/session"
)

// matcher finds a query in text, and tells from a message's stored bytes
// whether it can be in the message at all.
type matcher struct {
	re *regexp.Regexp
	// needle is what the stored bytes of a message that matches must
	// contain: the query as the store escapes it, lower-cased when fold.
	// nil when no such test is known (a regular expression): every message
	// is decoded.
	needle []byte
	fold   bool // compare lower-cased stored bytes with needle
	ascii  bool // needle is ASCII: lower-casing ASCII letters is enough
}

// newMatcher compiles query: a literal, or with regex an RE2 expression.
// Smart case, as ripgrep's: a query without an upper-case letter matches
// regardless of case.
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
		return nil, queryError{fmt.Errorf("bad regular expression %q: %w", query, err)}
	}
	m := &matcher{re: re, fold: fold}
	// The store writes U+FFFD for invalid UTF-8 as an escape, which the
	// needle would not have; such queries are matched on decoded text only.
	if !regex && !strings.ContainsAny(query, "\uFFFD\u2028\u2029") {
		q := query
		if fold {
			q = strings.ToLower(q)
		}
		quoted := session.AppendJSONString(nil, q)
		m.needle = quoted[1 : len(quoted)-1]
		m.ascii = isASCII(m.needle)
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

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// mayMatch reports whether the stored record v can hold a match. It never
// says no to a record that does (lower-casing commutes with the store's
// escaping, which leaves letters alone and writes escapes in lower case);
// it may say yes to one that does not, which find then settles. buf is
// scratch space kept between calls.
func (m *matcher) mayMatch(v []byte, buf *[]byte) bool {
	if m.needle == nil {
		return true
	}
	if !m.fold {
		return bytes.Contains(v, m.needle)
	}
	if !m.ascii {
		return bytes.Contains(bytes.ToLower(v), m.needle)
	}
	b := (*buf)[:0]
	if cap(b) < len(v) {
		b = make([]byte, 0, len(v)+len(v)/4)
	}
	b = b[:len(v)]
	for i, c := range v {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	*buf = b
	return bytes.Contains(b, m.needle)
}

// find returns where the query matches s, at most limit matches.
func (m *matcher) find(s string, limit int) [][]int {
	return m.re.FindAllStringIndex(s, limit)
}
