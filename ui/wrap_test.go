package ui

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

func plainLines(ls []line) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		var b strings.Builder
		for _, s := range l.segs {
			b.WriteString(s.text)
		}
		out[i] = b.String()
	}
	return out
}

func TestWrapSegs(t *testing.T) {
	ph := `[Content from /w/secrets/api.key filtered — trust tier "limited" does not have read access]`
	cases := []struct {
		name  string
		text  string
		width int
		want  []string
	}{
		{"fits", "hello world", 20, []string{"hello world"}},
		{"word wrap", "hello big world", 9, []string{"hello big", "world"}},
		{"newlines kept", "a\nb\n", 5, []string{"a", "b", ""}},
		{"indent kept on hard lines", "  x\n    y", 10, []string{"  x", "    y"}},
		{"no leading space after a soft break", "aaaa bbbb", 4, []string{"aaaa", "bbbb"}},
		{"long word breaks", "abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"wide runes count twice", "日本語テキスト", 6, []string{"日本語", "テキス", "ト"}},
		{"placeholder wraps whole", ph, 40, []string{
			"[Content from /w/secrets/api.key",
			`filtered — trust tier "limited" does not`,
			"have read access]",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := plainLines(wrapSegs([]seg{{text: c.text}}, c.width))
			for i := range got {
				got[i] = strings.TrimRight(got[i], " ") // a space may end a line
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("wrap(%q, %d)\n got %q\nwant %q", c.text, c.width, got, c.want)
			}
		})
	}
}

// Styles survive wrapping per segment: a styled run cut by a line break is
// styled on both lines, and nothing styled leaks into the padding.
func TestWrapKeepsInkPerLine(t *testing.T) {
	k := ink{pre: "<", post: ">"}
	ls := wrapSegs([]seg{{text: "plain "}, {text: "styled words here", ink: k}}, 12)
	got := []string{}
	for _, l := range ls {
		got = append(got, l.render(12))
	}
	want := []string{"plain <styled>", "<words here>  "}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q want %q", got, want)
	}
}

// FuzzWrap: for any text and width, no line is wider than the width (but
// for a single cluster wider than the whole line), the recorded widths are
// true, and no visible character is lost, added or reordered.
func FuzzWrap(f *testing.F) {
	for _, s := range []string{"", "hello world", "a\n\n b", "日本語 text", "[Content from /a/b filtered — trust tier \"x\" does not have read access]", "  indented\n\tx", "e\u0301 combining", "👩‍👩‍👧 family"} {
		f.Add(s, 7)
	}
	f.Fuzz(func(t *testing.T, text string, width int) {
		if !utf8.ValidString(text) || width < 1 || width > 300 {
			t.Skip()
		}
		text = inertText(text) // what panes wrap is always inert
		ls := wrapSegs([]seg{{text: text}}, width)
		for i, l := range ls {
			s := plainLines([]line{l})[0]
			if w := ansi.StringWidth(s); w != l.width {
				t.Fatalf("line %d %q: width recorded %d, real %d", i, s, l.width, w)
			}
			if l.width > width {
				if _, cw := ansi.FirstGraphemeCluster(s, ansi.GraphemeWidth); cw != l.width {
					t.Fatalf("line %d %q is %d wide, limit %d", i, s, l.width, width)
				}
			}
		}
		visible := func(s string) string {
			return strings.NewReplacer(" ", "", "\n", "").Replace(s)
		}
		if got, want := visible(strings.Join(plainLines(ls), "")), visible(text); got != want {
			t.Fatalf("characters changed:\n got %q\nwant %q", got, want)
		}
	})
}

// A wrapped row never leaves a line number alone: the text after it starts
// on the number's row, broken if it must be.
func TestWrapKeepsALineNumberWithItsText(t *testing.T) {
	lines := wrapSegs([]seg{{text: "    22    averyverylongidentifier(x)"}}, 30)
	if len(lines) < 2 {
		t.Fatalf("%d lines", len(lines))
	}
	first := lines[0].render(30)
	if !strings.Contains(first, "22") || !strings.Contains(first, "avery") {
		t.Fatalf("first row %q: the number is alone", first)
	}
	// Words after ordinary text still move whole.
	lines = wrapSegs([]seg{{text: "see it averyverylongword"}}, 20)
	if got := lines[0].render(20); strings.Contains(got, "avery") {
		t.Fatalf("a word after text was broken: %q", got)
	}
}
