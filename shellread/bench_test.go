package shellread

import (
	"strings"
	"testing"
)

// BenchmarkRead is the recogniser on the commands agents run most (sed -n,
// nl | sed, rg, cat, head), with outputs of realistic size.
func BenchmarkRead(b *testing.B) {
	var out strings.Builder
	for i := range 200 {
		out.WriteString("src/pkg/file.go:" + strings.Repeat("x", i%40) + ":    return compute(a, b)\n")
	}
	lines := out.String()
	for _, c := range []struct{ name, cmd, out string }{
		{"cat", "cat pkg1/file1.go", "package x\n"},
		{"sed", "sed -n '1,120p' src/main.go", "package x\n"},
		{"nl-sed", "nl -ba src/main.go | sed -n '40,120p'", "package x\n"},
		{"bash-lc", `bash -lc "rg -n compute src"`, lines},
		{"grep-rn-head", "grep -rn compute src | head -200", lines},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Read(Command{Line: c.cmd, Dir: "/ws", Home: "/home/me"}, c.out, lexical)
			}
		})
	}
}
