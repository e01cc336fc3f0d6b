// Package termsafe makes untrusted text safe to print to a terminal. It has no
// dependency on the TUI: the CLI and the TUI both print through it.
package termsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Inert makes untrusted text safe to print to a terminal: control characters,
// escape sequences, bidi controls and zero-width characters become visible
// symbols, so file content cannot move the cursor, recolour the screen, set
// the window title, reorder text or hide characters. Newlines and tabs stay.
// Invalid UTF-8 bytes become U+FFFD.
func Inert(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune('\uFFFD')
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20:
			b.WriteRune(0x2400 + r) // ␛ for ESC, ␍ for CR, ␈ for BS, …
		case r == 0x7f:
			b.WriteRune('\u2421') // ␡
		case r >= 0x80 && r < 0xa0, isInvisible(r):
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isPlain is the fast path: printable ASCII, newlines and tabs only.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c == 0x7f || c < 0x20 && c != '\n' && c != '\t' {
			return false
		}
	}
	return true
}

// isInvisible reports bidi controls, zero-width characters and the other
// format characters (Unicode Cf: invisible, yet they change how the text
// around them is drawn or measured).
func isInvisible(r rune) bool {
	if unicode.Is(unicode.Cf, r) {
		return true
	}
	switch {
	case r >= 0x200B && r <= 0x200F, // zero-width space/joiners, LRM, RLM
		r >= 0x202A && r <= 0x202E, // bidi embeddings and overrides
		r >= 0x2060 && r <= 0x2064, // word joiner, invisible operators
		r >= 0x2066 && r <= 0x2069, // bidi isolates
		r == 0x061C, r == 0xFEFF, r == 0x00AD, r == 0x180E:
		return true
	}
	return false
}
