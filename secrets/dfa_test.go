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
