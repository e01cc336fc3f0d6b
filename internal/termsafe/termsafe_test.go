package termsafe

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// inertByRune is Inert as it was written first, a rune at a time: the
// reference the run-copying Inert must equal.
func inertByRune(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune('\uFFFD')
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20:
			b.WriteRune(0x2400 + r)
		case r == 0x7f:
			b.WriteRune('\u2421')
		case r >= 0x80 && r < 0xa0, isInvisible(r):
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestInert(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"plain\ttext\n", "plain\ttext\n"},
		{"a — b → c ✓ 日本", "a — b → c ✓ 日本"},
		{"\x1b]0;title\x07red\x1b[31m", "␛]0;title␇red␛[31m"},
		{"cr\rdel\x7f", "cr␍del␡"},
		{"c1\u0085 bidi\u202Eevil\u202C zw\u200B bom\uFEFF", "c1<U+0085> bidi<U+202E>evil<U+202C> zw<U+200B> bom<U+FEFF>"},
		{"bad\xff\xfeutf8 \xe2\x82", "bad\uFFFD\uFFFDutf8 \uFFFD\uFFFD"},
		{"kept \uFFFD", "kept \uFFFD"},
		{"\x00", "␀"},
		{"end\u2066", "end<U+2066>"},
	} {
		if got := Inert(c.in); got != c.want {
			t.Errorf("Inert(%q) = %q, want %q", c.in, got, c.want)
		}
		if ref := inertByRune(c.in); ref != c.want {
			t.Errorf("reference(%q) = %q, want %q", c.in, ref, c.want)
		}
	}
}

func FuzzInert(f *testing.F) {
	for _, s := range []string{"", "plain", "a — b", "\x1b[2J", "x\u202Ey", "\xff", "\u00ad\u0600\U000E0001", "\r\n\t\x7f\u0085"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := Inert(s), inertByRune(s)
		if got != want {
			t.Fatalf("Inert(%q) = %q, the rune-at-a-time reference %q", s, got, want)
		}
	})
}

// BenchmarkInert: a tool result of code with a few non-ASCII characters
// (an em dash, an arrow), as an assistant writes them, and one with an
// escape sequence to replace.
func BenchmarkInert(b *testing.B) {
	code := strings.Repeat("func step(x int) int { return x*2 + 1 } // doubles — then adds one → odd\n", 40)
	for _, c := range []struct{ name, s string }{
		{"ascii", strings.Repeat("func step(x int) int { return x*2 + 1 }\n", 40)},
		{"unicode", code},
		{"escape", code + "\x1b[31m"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				Inert(c.s)
			}
		})
		b.Run(c.name+"/by-rune", func(b *testing.B) {
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				inertByRune(c.s)
			}
		})
	}
}
