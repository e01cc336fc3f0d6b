package tools

import (
	"io"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlText reduces an HTML document to the text a reader sees: scripts,
// styles and other non-content dropped, blocks on their own lines, headings
// as "#", list items as "-", links as "text (url)", preformatted text kept.
func htmlText(r io.Reader, base *url.URL) (string, error) {
	doc, err := html.Parse(r)
	if err != nil {
		return "", err
	}
	w := &textWriter{base: base}
	if t := findTitle(doc); t != "" {
		w.text("Title: " + t)
		w.paragraph()
	}
	w.node(doc)
	return strings.TrimSpace(w.b.String()), nil
}

func findTitle(n *html.Node) string {
	if n.Type == html.ElementNode && n.DataAtom == atom.Title {
		return strings.Join(strings.Fields(plainText(n)), " ")
	}
	if n.Type == html.ElementNode && n.DataAtom == atom.Body {
		return ""
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := findTitle(c); t != "" {
			return t
		}
	}
	return ""
}

func plainText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// textWriter collapses whitespace the way a browser does and keeps at most
// one blank line between blocks.
type textWriter struct {
	b     strings.Builder
	base  *url.URL
	nl    int  // newlines at the end of b
	space bool // a space is due before the next word
	pre   int  // depth of <pre>
}

func (w *textWriter) text(s string) {
	if w.pre > 0 {
		w.raw(s)
		return
	}
	if s != "" && isSpace(s[0]) {
		w.space = true
	}
	for i, f := range strings.Fields(s) {
		if i > 0 {
			w.space = true
		}
		if w.space && w.nl == 0 && w.b.Len() > 0 {
			w.b.WriteByte(' ')
		}
		w.b.WriteString(f)
		w.nl, w.space = 0, false
	}
	if s != "" && isSpace(s[len(s)-1]) {
		w.space = true
	}
}

func (w *textWriter) raw(s string) {
	if s == "" {
		return
	}
	w.b.WriteString(s)
	w.nl = len(s) - len(strings.TrimRight(s, "\n"))
	w.space = false
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' }

func (w *textWriter) newline() {
	if w.b.Len() > 0 && w.nl == 0 {
		w.b.WriteByte('\n')
		w.nl = 1
	}
	w.space = false
}

func (w *textWriter) paragraph() {
	w.newline()
	if w.b.Len() > 0 && w.nl == 1 {
		w.b.WriteByte('\n')
		w.nl = 2
	}
}

// skipped elements are never content a reader sees.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Svg: true, atom.Head: true, atom.Iframe: true, atom.Canvas: true, atom.Object: true,
}

var blocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Header: true,
	atom.Footer: true, atom.Main: true, atom.Nav: true, atom.Aside: true, atom.Ul: true,
	atom.Ol: true, atom.Blockquote: true, atom.Table: true, atom.Dl: true, atom.Figure: true,
	atom.Pre: true, atom.Form: true, atom.Fieldset: true, atom.Details: true, atom.Summary: true,
	atom.Address: true, atom.Hr: true,
}

func (w *textWriter) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
		return
	case html.CommentNode, html.DoctypeNode:
		return
	case html.ElementNode:
		if skipped[n.DataAtom] {
			return
		}
		w.element(n)
		return
	}
	w.children(n)
}

func (w *textWriter) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.node(c)
	}
}

func (w *textWriter) element(n *html.Node) {
	switch a := n.DataAtom; {
	case a == atom.Br:
		w.raw("\n")
	case headingLevel(a) > 0:
		w.paragraph()
		w.text(strings.Repeat("#", headingLevel(a)) + " ")
		w.children(n)
		w.paragraph()
	case a == atom.Li:
		w.newline()
		w.text("- ")
		w.children(n)
		w.newline()
	case a == atom.Tr, a == atom.Dt, a == atom.Dd, a == atom.Figcaption:
		w.newline()
		w.children(n)
		w.newline()
	case a == atom.Td, a == atom.Th:
		if w.nl == 0 && w.b.Len() > 0 {
			w.text(" | ")
		}
		w.children(n)
	case a == atom.Img:
		if alt := attr(n, "alt"); alt != "" {
			w.text("[image: " + alt + "]")
		}
	case a == atom.A:
		w.link(n)
	case a == atom.Pre:
		w.paragraph()
		w.pre++
		w.children(n)
		w.pre--
		w.paragraph()
	case blocks[a]:
		w.paragraph()
		w.children(n)
		w.paragraph()
	default:
		w.children(n)
	}
}

// link writes the link's text and, when it leads somewhere else, its URL.
func (w *textWriter) link(n *html.Node) {
	w.children(n)
	href := attr(n, "href")
	if href == "" || strings.HasPrefix(href, "#") || strings.HasPrefix(strings.ToLower(href), "javascript:") {
		return
	}
	if u, err := url.Parse(href); err == nil && w.base != nil {
		href = w.base.ResolveReference(u).String()
	}
	label := strings.Join(strings.Fields(plainText(n)), " ")
	if label == href || label == "" {
		if label == "" {
			w.text(href)
		}
		return
	}
	w.text(" (" + href + ")")
}

func headingLevel(a atom.Atom) int {
	switch a {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	case atom.H6:
		return 6
	}
	return 0
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
