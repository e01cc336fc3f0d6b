package secrets

import (
	"slices"
	"strings"
	"testing"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
)

// FuzzKeywordDFA: the automaton finds the keywords the automaton gitleaks
// uses finds, at the same places, in the default rules' keywords and in a
// small set whose keywords overlap and nest.
func FuzzKeywordDFA(f *testing.F) {
	for _, c := range credentials() {
		f.Add(strings.ToLower(c.before + c.secret + c.after))
	}
	f.Add("they asked for the key: sk-live, s.x, q~y, eyj0 and api_key")
	f.Add("abababcab abcabc bcab")
	small := []string{"ab", "abc", "bca", "b", "cab", "abab"}
	f.Fuzz(func(t *testing.T, s string) {
		ix := loadKeywords()
		if ix == nil {
			t.Fatal("no keyword index")
		}
		for _, set := range []struct {
			dfa      *keywordDFA
			patterns []string
		}{{ix.dfa, ix.keywords}, {newKeywordDFA(small), small}} {
			got, want := matchesOf(set.dfa, []byte(s)), oracleMatches(set.patterns, []byte(s))
			if !slices.Equal(got, want) {
				t.Fatalf("in %q: %v, want %v", s, got, want)
			}
		}
	})
}

// matchesOf lists (end, keyword) of every match the automaton finds.
func matchesOf(a *keywordDFA, b []byte) [][2]int {
	var out [][2]int
	a.walk(b, func(end int, p int32) bool {
		out = append(out, [2]int{end, int(p)})
		return true
	})
	slices.SortFunc(out, cmpPair)
	return slices.Compact(out)
}

func oracleMatches(patterns []string, b []byte) [][2]int {
	tr := ahocorasick.NewTrieBuilder().AddStrings(patterns).Build()
	var out [][2]int
	tr.Walk(b, func(end, _, p int64) bool {
		out = append(out, [2]int{int(end) + 1, int(p)})
		return true
	})
	slices.SortFunc(out, cmpPair)
	return slices.Compact(out)
}

func cmpPair(a, b [2]int) int {
	if a[0] != b[0] {
		return a[0] - b[0]
	}
	return a[1] - b[1]
}

// FuzzKeywordRulesInPieces: the rules whose keywords a text holds are the
// same lower-cased and walked a piece at a time as lower-cased and walked
// whole, wherever the pieces end: in a keyword, in a rune that lower-cases
// to a keyword's letter (U+0130, U+212A), in bytes that are not UTF-8.
func FuzzKeywordRulesInPieces(f *testing.F) {
	for _, c := range credentials() {
		f.Add(c.before+c.secret+c.after, 7)
	}
	f.Add("api_\u212aEY=1 and t\u0130\u0130\u0130 sk-live", 3)
	f.Add("\xff\xfe\u212a\u212aey\xe2\x84", 1)
	f.Add(strings.Repeat("\x84", 40)+"KEY", 5)
	// Each keyword alone in its text, across the end of the first piece
	// of 4 bytes, upper-cased, and with a Kelvin sign for its k.
	if ix := loadKeywords(); ix != nil {
		for _, k := range ix.keywords {
			if len(k) > 1 {
				f.Add("..."+strings.ToUpper(k)+"..", 3)
				f.Add("..."+strings.ReplaceAll(k, "k", "\u212a")+"..", 3)
			}
		}
	}
	f.Fuzz(func(t *testing.T, s string, piece int) {
		ix := loadKeywords()
		if ix == nil {
			t.Fatal("no keyword index")
		}
		var want ruleSet
		ix.dfa.walk(lower(s, nil), func(_ int, pattern int32) bool {
			for _, r := range ix.byKeyword[pattern] {
				want[r/64] |= 1 << (r % 64)
			}
			return true
		})
		defer func(n int) { lowerPiece = n }(lowerPiece)
		lowerPiece = 1 + abs(piece)%64
		if got, found := ix.keywordRules(s); got != want || found != (want != ruleSet{}) {
			t.Fatalf("in %q, in pieces of %d bytes: rules %v (found %v), whole %v", s, lowerPiece, got, found, want)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
