package policy

import (
	"errors"
	"testing"
)

// A table header left open at the end of its line is reported on that line,
// not the next (the parser counts the newline it stopped at on the next).
func TestSyntaxErrorAtALineEndNamesThatLine(t *testing.T) {
	for _, src := range []string{
		"default_tier = \"a\"\n[tiers.a\nlabel = \"x\"\nread = [\"/**\"]\n",
		"default_tier = \"a\"\n[tiers.a\n",
	} {
		_, err := Parse([]byte(src), "/p/policy.toml")
		var le *LoadError
		if !errors.As(err, &le) || le.Line != 2 {
			t.Errorf("%q: %v, want line 2", src, err)
		}
	}
}
