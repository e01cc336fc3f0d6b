package secrets

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// openingRules are the default rules whose patterns have an opening.
func openingRules(t testing.TB) map[string]*opening {
	out := map[string]*opening{}
	for id, r := range defaultRules().Rules {
		if r.Regex == nil {
			continue
		}
		if o := openingOf(r.Regex.String()); o != nil {
			out[id] = o
		}
	}
	return out
}

// TestOpenings: the rules that cost the most where they find nothing have
// an opening, so that they are ruled out without running them; and an
// opening finds what its rule's pattern finds, on texts where it matches
// and texts where it does not.
func TestOpenings(t *testing.T) {
	os := openingRules(t)
	for _, id := range []string{"generic-api-key", "jwt", "github-pat", "slack-bot-token", "kubernetes-secret-yaml"} {
		if os[id] == nil {
			t.Errorf("rule %s has no opening", id)
		}
	}
	if len(os) < 100 {
		t.Errorf("%d rules have an opening, want most of gitleaks' 222", len(os))
	}
	texts := []string{
		"/demo/src/pkg3/file7.go:3:\tstep(3)\n/demo/secrets/key17.pem:9:\treturn step(x)\n",
		"api_key = \"Zx8Qw3Lm0Pv7Rt2Yb5Nc9Kd4Hs6Jf1Gg\"",
		"the \u212aEY=Zx8Qw3Lm0Pv7Rt2Yb5Nc9Kd4Hs6Jf1Gg; is a key with a Kelvin sign",
		"\u017fecret: Zx8Qw3Lm0Pv7Rt2Yb5Nc9Kd4Hs6Jf1Gg\n",
		"xeyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghij not at a boundary",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghij",
		"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: c2VjcmV0cGFzc3dvcmQxMjM=\n",
		"data:\n  password: c2VjcmV0cGFzc3dvcmQxMjM=\nkind: Secret\n",
		"/demo/secrets/key7.pem:9:\treturn step(x) // the kind: of data: here is no Secret",
	}
	for _, c := range credentials() {
		texts = append(texts, c.before+c.secret+c.after, strings.ToUpper(c.before+c.secret+c.after))
	}
	rules := defaultRules().Rules
	matched := 0
	for _, id := range slices.Sorted(maps.Keys(os)) {
		for _, s := range texts {
			want := rules[id].Regex.MatchString(s)
			if got := os[id].found(s); got != want {
				t.Errorf("%s on %q: opening %v, pattern %v", id, s, got, want)
			}
			if want {
				matched++
			}
		}
	}
	if matched < len(credentials()) {
		t.Errorf("only %d matches among the texts: they do not try the openings", matched)
	}
}

// FuzzOpening: for every rule with an opening, the opening says the
// pattern matches exactly where its MatchString does.
func FuzzOpening(f *testing.F) {
	for _, c := range credentials() {
		f.Add(c.before + c.secret + c.after)
	}
	f.Add("token: \u212a\u212a\u017f-0123456789abcdef")
	f.Add("/demo/secrets/key17.pem:9:\treturn step(x)")
	os := openingRules(f)
	rules := defaultRules().Rules
	ids := slices.Sorted(maps.Keys(os))
	f.Fuzz(func(t *testing.T, s string) {
		for _, id := range ids {
			if got, want := os[id].found(s), rules[id].Regex.MatchString(s); got != want {
				t.Fatalf("%s on %q: opening %v, pattern %v", id, s, got, want)
			}
		}
	})
}
