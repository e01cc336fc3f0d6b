package ui

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// seg is a run of plain (already inert) text drawn with one ink. gutter,
// when set, starts every line the text is on — including the lines it wraps
// onto — in gutterInk: the mark (│ content, ✖ placeholder, ✗ withheld) that
// tells them apart without colour, and that content itself cannot draw.
type seg struct {
	text      string
	ink       ink
	gutter    string
	gutterInk ink
}

// line is one wrapped row of a pane: its segments and their width in cells.
type line struct {
	segs  []seg
	width int
}

// render draws the line padded with spaces to width cells.
func (l line) render(width int) string {
	var b strings.Builder
	b.Grow(width + 16)
	for _, s := range l.segs {
		b.WriteString(s.ink.wrap(s.text))
	}
	if pad := width - l.width; pad > 0 {
		b.WriteString(spaces(pad))
	}
	return b.String()
}

const blanks = "                                                                                                                                "

func spaces(n int) string {
	if n <= len(blanks) {
		return blanks[:n]
	}
	return strings.Repeat(" ", n)
}

// textWidth is the width of text in cells, measured like lipgloss measures
// (grapheme clusters, escape sequences take no room), with a fast path for
// plain ASCII.
func textWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 || s[i] == 0x1b {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

// wrapper lays segments out in lines of at most width cells. Words move to
// the next line whole when they fit there; longer words (paths, placeholders
// in a narrow pane) break between grapheme clusters, so nothing is ever cut
// off: every character of the input is on some line.
type wrapper struct {
	width int
	lines []line
	cur   line
	soft  bool // the current line began at a soft break: drop leading spaces
	// gutter is the mark of the segment being laid out; gw is how wide the
	// current line's mark is (0 when it has none yet).
	gutter    string
	gutterInk ink
	gw        int
}

func wrapSegs(segs []seg, width int) []line {
	if width < 1 {
		width = 1
	}
	w := wrapper{width: width}
	for _, s := range segs {
		w.gutter, w.gutterInk = s.gutter, s.gutterInk
		if w.gutter != "" && w.cur.width == 0 {
			w.mark()
		}
		w.add(s.text, s.ink)
	}
	w.lines = append(w.lines, w.cur.measured())
	return w.lines
}

// mark starts the current line with the segment's gutter.
func (w *wrapper) mark() {
	gw := textWidth(w.gutter)
	w.cur.segs = append(w.cur.segs, seg{text: w.gutter, ink: w.gutterInk})
	w.cur.width += gw
	w.gw = gw
}

func (w *wrapper) add(text string, k ink) {
	for {
		nl := strings.IndexByte(text, '\n')
		piece := text
		if nl >= 0 {
			piece = text[:nl]
		}
		w.addPiece(piece, k)
		if nl < 0 {
			return
		}
		w.breakLine(false)
		text = text[nl+1:]
	}
}

// addPiece handles text without newlines: alternate runs of spaces and words.
func (w *wrapper) addPiece(s string, k ink) {
	for s != "" {
		i := 0
		if s[0] == ' ' {
			for i < len(s) && s[i] == ' ' {
				i++
			}
			w.spaces(s[:i], k)
		} else {
			for i < len(s) && s[i] != ' ' {
				i++
			}
			w.word(s[:i], k)
		}
		s = s[i:]
	}
}

func (w *wrapper) breakLine(soft bool) {
	w.lines = append(w.lines, w.cur.measured())
	w.cur = line{}
	w.soft = soft
	w.gw = 0
	if w.gutter != "" {
		w.mark()
	}
}

// measured sets the line's width from its whole text when it has non-ASCII:
// grapheme clusters can join across the words the wrapper measured one by
// one, and the padding must match what the terminal draws.
func (l line) measured() line {
	for _, s := range l.segs {
		for i := 0; i < len(s.text); i++ {
			if s.text[i] >= 0x80 {
				var b strings.Builder
				for _, s := range l.segs {
					b.WriteString(s.text)
				}
				l.width = ansi.StringWidth(b.String())
				return l
			}
		}
	}
	return l
}

func (w *wrapper) put(s string, width int, k ink) {
	n := len(w.cur.segs)
	if n > 0 && w.cur.segs[n-1].ink == k {
		w.cur.segs[n-1].text += s
	} else {
		w.cur.segs = append(w.cur.segs, seg{text: s, ink: k})
	}
	w.cur.width += width
}

func (w *wrapper) spaces(s string, k ink) {
	if w.soft && w.cur.width == w.gw {
		return
	}
	room := w.width - w.cur.width
	if len(s) > room {
		// Spaces never start the next line of a wrapped paragraph.
		if room > 0 {
			w.put(s[:room], room, k)
		}
		w.breakLine(true)
		return
	}
	w.put(s, len(s), k)
}

func (w *wrapper) word(s string, k ink) {
	ww := textWidth(s)
	if w.cur.width+ww <= w.width {
		w.put(s, ww, k)
		return
	}
	if ww <= w.width-w.gw && w.cur.width > w.gw && !w.onlyLineNumber() {
		w.breakLine(true)
		w.put(s, ww, k)
		return
	}
	w.hardBreak(s, k)
}

// onlyLineNumber reports whether the current line holds, after its mark,
// nothing but a line number (a read result's "    22" or "22→"): the word
// that follows is then broken to start on that line, never moved to the
// next and the number left alone.
func (w *wrapper) onlyLineNumber() bool {
	var b strings.Builder
	for i, sg := range w.cur.segs {
		if i == 0 && w.gw > 0 {
			continue // the mark
		}
		b.WriteString(sg.text)
	}
	t := strings.TrimSpace(b.String())
	t = strings.TrimSuffix(strings.TrimSuffix(t, "→"), ":")
	if t == "" {
		return false
	}
	for _, c := range t {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// hardBreak splits a word too long for a line between grapheme clusters.
func (w *wrapper) hardBreak(s string, k ink) {
	for s != "" {
		room := w.width - w.cur.width
		n, used := fitPrefix(s, room)
		if n == 0 {
			if w.cur.width > w.gw {
				w.breakLine(true)
				continue
			}
			// A single cluster wider than the whole line: place it anyway.
			n, used = firstCluster(s)
		}
		w.put(s[:n], used, k)
		s = s[n:]
		if s != "" {
			w.breakLine(true)
		}
	}
}

// fitPrefix returns how many bytes of s fit in room cells, and their width.
func fitPrefix(s string, room int) (n, width int) {
	for n < len(s) {
		if s[n] < 0x80 {
			if width+1 > room {
				return n, width
			}
			n++
			width++
			continue
		}
		cn, cw := firstCluster(s[n:])
		if width+cw > room {
			return n, width
		}
		n += cn
		width += cw
	}
	return n, width
}

// firstCluster is the length and width of s's first grapheme cluster; never
// an empty one, so loops over clusters always advance.
func firstCluster(s string) (n, width int) {
	c, w := ansi.FirstGraphemeCluster(s, ansi.GraphemeWidth)
	if len(c) == 0 {
		_, size := utf8.DecodeRuneInString(s)
		return size, 1
	}
	return len(c), w
}
