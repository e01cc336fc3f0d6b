package policytest

import (
	"slices"
	"testing"
)

// Tiers loads as its comment says, and Labelled changes only the limited
// tier's label.
func TestTiers(t *testing.T) {
	for _, label := range []string{"limited", "limited cloud"} {
		p := Policy(t, Labelled(label))
		all, _ := p.TierFor("trusted/m")
		limited, _ := p.TierFor("limited/m")
		none, _ := p.TierFor("other/m")
		if all.Name != "all" || all.Label != "all" || limited.Name != "limited" || limited.Label != label || none.Name != "none" || none.Label != "none" {
			t.Fatalf("%q: tiers %q/%q, %q/%q, %q/%q", label, all.Name, all.Label, limited.Name, limited.Label, none.Name, none.Label)
		}
		if !slices.Equal(all.Tools, []string{"read", "grep", "glob", "bash", "webfetch"}) || limited.Offers("bash") {
			t.Fatalf("%q: tools %q, %q", label, all.Tools, limited.Tools)
		}
		if d := p.Decide(limited, "/w/secrets/k"); d.Allowed || d.Line != 12 {
			t.Fatalf("%q: secrets/k for limited: %+v", label, d)
		}
		if d := p.Decide(none, "/w/a"); d.Allowed {
			t.Fatalf("%q: none reads /w/a", label)
		}
	}
}
