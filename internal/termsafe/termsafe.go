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
	// Runs that stay as they are are copied whole, and a string with
	// nothing to replace is returned as it is: a rune at a time, text
	// with any non-ASCII character (an em dash, an arrow) cost a
	// twentieth of an HTML export's CPU at a million messages.
	var b strings.Builder
	done := 0 // s[:done] is in b
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			i++
			continue
		}
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		var repl rune
		switch {
		case r == utf8.RuneError && size == 1:
			repl = '\uFFFD'
		case r < 0x20:
			repl = 0x2400 + r // ␛ for ESC, ␍ for CR, ␈ for BS, …
		case r == 0x7f:
			repl = '\u2421' // ␡
		case r >= 0x80 && r < 0xa0, isInvisible(r):
			repl = -1
		default:
			i += size
			continue
		}
		if done == 0 {
			b.Grow(len(s) + 16)
		}
		b.WriteString(s[done:i])
		if repl < 0 {
			fmt.Fprintf(&b, "<U+%04X>", r)
		} else {
			b.WriteRune(repl)
		}
		i += size
		done = i
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
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
