// Package codetext makes text shaped like source code as a read tool
// returns it, for the benchmarks of several packages that must agree on it
// (the session store's, the CLI's million-message session, the derived
// search's): the same text for the same random source.
package codetext

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Words are the tokens Text draws from: thirty of them, so that every short
// window of a line is in a long text many times over.
var Words = strings.Fields(`func return if else for range := err nil string int
	package import "fmt" ctx context.Context struct interface map[string]any []byte
	// TODO: handle the error case; the retry loop ignores "deadline" value ü ✓ → x`)

// Text is about size bytes of numbered lines ("%6d\t" as cat -n writes
// them), tab-indented, of 3 to 8 of Words separated by spaces.
func Text(r *rand.Rand, size int) string {
	var b strings.Builder
	b.Grow(size + 64)
	for line := 1; b.Len() < size; line++ {
		fmt.Fprintf(&b, "%6d\t%s", line, strings.Repeat("\t", r.IntN(4)))
		for w := range 3 + r.IntN(6) {
			if w > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(Words[r.IntN(len(Words))])
		}
		b.WriteByte('\n')
	}
	return b.String()
}
