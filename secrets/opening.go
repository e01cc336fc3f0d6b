package secrets

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"
)

// An opening tells, much faster than the rule's own pattern, whether the
// pattern matches anywhere in a text, for a pattern that begins with
// something optional (gitleaks' semi-generic rules begin with
// `[\w.-]{0,50}?`) or a word boundary, and then with one of a few literal
// strings (a keyword: `(?i:access|auth|key|...)`). Go's regexp engine
// starts a thread of such a pattern at every byte of a text and carries
// the optional part's 50 along: generic-api-key took 22 µs for a 120-byte
// grep result that names a `key…` file, a third of the first credential
// scan of the UI benchmark's million messages. A match without its
// optional beginning is still a match, so the pattern matches somewhere if
// and only if the rest of it matches at some place where one of the
// literals begins: the opening finds those places with a byte table, and
// tries the rest, anchored, at each. A rule that cannot match is not run
// (gitleaks' findings of a text come only from the rules that match in
// it); one that can is run as gitleaks runs it. FuzzOpening holds found to
// the pattern's MatchString.
type opening struct{ ways []way }

// way is one way a match of the pattern can begin: a branch of an
// alternation the pattern begins with (kubernetes-secret-yaml's
// \bkind:…|\bdata:…), or the whole pattern.
type way struct {
	boundary bool // a word boundary comes first
	first    [256]bool
	prefixes [][]litRune // a match (after the optional part) begins with one of these
	rest     *regexp.Regexp
}

// lazyOpening is a rule's opening, made the first time a text holds one
// of its keywords: compiling all of them took about 25 ms, which a process
// that scans a few texts need not pay.
type lazyOpening struct {
	once sync.Once
	o    *opening
}

func (l *lazyOpening) get(pattern string) *opening {
	l.once.Do(func() {
		if pattern != "" {
			l.o = openingOf(pattern)
		}
	})
	return l.o
}

// litRune is a rune of a literal prefix: fold says it matches any rune of
// its case-folding orbit, as (?i) does.
type litRune struct {
	r    rune
	fold bool
}

// maxPrefixes bounds how many literal strings an opening looks for.
const maxPrefixes = 64

// openingOf returns the opening of pattern, or nil when it has none.
func openingOf(pattern string) *opening {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	subs := stripOptional(concatSubs(re))
	if len(subs) == 0 {
		return nil
	}
	// A pattern that begins with an alternation begins as one of its
	// branches does, each followed by the rest of the pattern.
	branches := [][]*syntax.Regexp{subs}
	if subs[0].Op == syntax.OpAlternate {
		branches = nil
		for _, b := range subs[0].Sub {
			branches = append(branches, append(slices.Clip(concatSubs(b)), subs[1:]...))
		}
	}
	o := &opening{}
	for _, b := range branches {
		w, ok := wayOf(stripOptional(b))
		if !ok {
			return nil
		}
		o.ways = append(o.ways, w)
	}
	return o
}

// concatSubs is what re is a concatenation of: its parts, or re alone.
func concatSubs(re *syntax.Regexp) []*syntax.Regexp {
	if re.Op == syntax.OpConcat {
		return re.Sub
	}
	return []*syntax.Regexp{re}
}

// stripOptional drops what may match nothing at the start: zero
// repetitions match the empty string wherever they are, whatever they
// hold.
func stripOptional(subs []*syntax.Regexp) []*syntax.Regexp {
	for len(subs) > 0 && (subs[0].Op == syntax.OpStar || subs[0].Op == syntax.OpQuest || subs[0].Op == syntax.OpRepeat && subs[0].Min == 0) {
		subs = subs[1:]
	}
	return subs
}

// wayOf is the way of the concatenation subs, if it begins, after a word
// boundary perhaps, with one of a few literal strings.
func wayOf(subs []*syntax.Regexp) (way, bool) {
	var w way
	if len(subs) > 0 && subs[0].Op == syntax.OpWordBoundary {
		w.boundary = true
		subs = subs[1:]
	}
	if len(subs) == 0 {
		return w, false
	}
	pre, _, ok := prefixesOf(&syntax.Regexp{Op: syntax.OpConcat, Sub: subs})
	if !ok || len(pre) == 0 {
		return w, false
	}
	for _, p := range pre {
		if len(p) == 0 {
			return w, false // a match may begin anywhere
		}
		for _, r := range orbit(p[0]) {
			var b [utf8.UTFMax]byte
			utf8.EncodeRune(b[:], r)
			w.first[b[0]] = true
		}
	}
	w.prefixes = pre
	anchored := &syntax.Regexp{Op: syntax.OpConcat, Sub: append([]*syntax.Regexp{{Op: syntax.OpBeginText}}, subs...)}
	var err error
	if w.rest, err = regexp.Compile(anchored.String()); err != nil {
		return w, false
	}
	return w, true
}

// prefixesOf returns strings one of which begins every match of re, and
// whether they are all of re's matches (so that what follows re may extend
// them). ok is false when re may begin with something else: a class of
// many runes, an assertion, a repetition.
func prefixesOf(re *syntax.Regexp) (pre [][]litRune, whole, ok bool) {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return [][]litRune{nil}, true, true
	case syntax.OpLiteral:
		p := make([]litRune, len(re.Rune))
		for i, r := range re.Rune {
			p[i] = litRune{r, re.Flags&syntax.FoldCase != 0}
		}
		return [][]litRune{p}, true, true
	case syntax.OpCharClass:
		n := 0
		for i := 0; i < len(re.Rune); i += 2 {
			n += int(re.Rune[i+1]-re.Rune[i]) + 1
			if n > 8 {
				return nil, false, false
			}
		}
		for i := 0; i < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				pre = append(pre, []litRune{{r, false}})
			}
		}
		return pre, true, true
	case syntax.OpCapture:
		return prefixesOf(re.Sub[0])
	case syntax.OpAlternate:
		whole = true
		for _, s := range re.Sub {
			p, w, ok := prefixesOf(s)
			if !ok || len(pre)+len(p) > maxPrefixes {
				return nil, false, false
			}
			pre, whole = append(pre, p...), whole && w
		}
		return pre, whole, true
	case syntax.OpPlus, syntax.OpRepeat:
		if re.Op == syntax.OpRepeat && re.Min == 0 {
			return nil, false, false
		}
		// One time at least: a match begins as the first time does.
		p, _, ok := prefixesOf(re.Sub[0])
		return p, false, ok
	case syntax.OpConcat:
		pre = [][]litRune{nil}
		for _, s := range re.Sub {
			p, w, ok := prefixesOf(s)
			if !ok {
				// What has been found so far still begins every match,
				// unless it is nothing.
				return pre, false, !onlyEmpty(pre)
			}
			if len(pre)*len(p) > maxPrefixes {
				return pre, false, !onlyEmpty(pre)
			}
			var next [][]litRune
			for _, a := range pre {
				for _, b := range p {
					next = append(next, append(append([]litRune(nil), a...), b...))
				}
			}
			pre = next
			if !w {
				return pre, false, true
			}
		}
		return pre, true, true
	}
	return nil, false, false
}

func onlyEmpty(pre [][]litRune) bool {
	for _, p := range pre {
		if len(p) > 0 {
			return false
		}
	}
	return true
}

// orbit is the runes that l matches.
func orbit(l litRune) []rune {
	out := []rune{l.r}
	if l.fold {
		for r := unicode.SimpleFold(l.r); r != l.r; r = unicode.SimpleFold(r) {
			out = append(out, r)
		}
	}
	return out
}

// found reports whether the opening's pattern matches somewhere in s.
func (o *opening) found(s string) bool {
	for i := range o.ways {
		if o.ways[i].found(s) {
			return true
		}
	}
	return false
}

func (w *way) found(s string) bool {
	for q := 0; q < len(s); q++ {
		if !w.first[s[q]] {
			continue
		}
		// \b as Go sees it: ASCII word bytes, and none before the text.
		if w.boundary && (q > 0 && syntax.IsWordChar(rune(s[q-1]))) == syntax.IsWordChar(rune(s[q])) {
			continue
		}
		if w.begins(s[q:]) && w.rest.MatchString(s[q:]) {
			return true
		}
	}
	return false
}

// begins reports whether s begins with one of the prefixes.
func (w *way) begins(s string) bool {
next:
	for _, p := range w.prefixes {
		t := s
		for _, l := range p {
			r, n := utf8.DecodeRuneInString(t)
			if n == 0 || r != l.r && !(l.fold && foldEqual(r, l.r)) {
				continue next
			}
			t = t[n:]
		}
		return true
	}
	return false
}

func foldEqual(a, b rune) bool {
	for r := unicode.SimpleFold(b); r != b; r = unicode.SimpleFold(r) {
		if r == a {
			return true
		}
	}
	return false
}
