package ui

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/scrim-dev/scrim/internal/termsafe"
	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/session"
)

// inertText prepares stored text for a pane: Inert makes it harmless, CRLF
// line ends become plain newlines, and tabs become four spaces (a pane
// cannot follow the terminal's tab stops once text is wrapped and padded).
func inertText(s string) string {
	if strings.Contains(s, "\r\n") {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	s = termsafe.Inert(s)
	if strings.IndexByte(s, '\t') >= 0 {
		s = strings.ReplaceAll(s, "\t", "    ")
	}
	return s
}

// inertLine is Inert for one-line fields (titles, paths, model IDs): line
// breaks and tabs become visible too, so a title cannot break the layout.
func inertLine(s string) string {
	s = termsafe.Inert(s)
	if strings.ContainsAny(s, "\n\t") {
		s = strings.NewReplacer("\n", "\u2424", "\t", "\u2409").Replace(s)
	}
	return s
}

// maxPathLines is how many sourcePaths a message row lists; `e` shows all.
const maxPathLines = 3

// sideView is what one pane shows of one message.
type sideView struct {
	msg    *session.Message           // nil: not sent (an event) or not computed yet
	sent   bool                       // the right-hand (sent) pane
	denied map[string]bool            // stored side: paths whose parts the active model does not get
	whole  bool                       // stored side: the whole message is withheld
	spans  map[int][]session.Filtered // stored side: by part, what placeholders inside its copy replace
	tier   string                     // label of the active model's tier
	note   string                     // replaces the body (not sent, still computing, cannot decode)
	mark   *regexp.Regexp             // the find's matches, drawn in the Hit ink
}

// renderSide lays out one message for one pane of the given width.
func (s *styles) renderSide(v sideView, seq uint64, base *session.Message, width int, loc *time.Location) []line {
	var segs []seg
	segs = s.headerSegs(segs, v, seq, base, loc)
	segs = append(segs, seg{text: "\n"})
	if v.note != "" {
		segs = append(segs, seg{text: v.note, ink: s.Event})
		return wrapSegs(segs, width)
	}
	m := v.msg
	segs = s.pathSegs(segs, v, m)
	body := len(segs)
	segs = s.bodySegs(segs, v, m)
	if v.mark != nil {
		segs = append(segs[:body:body], s.markSegs(segs[body:], v.mark)...)
	}
	return wrapSegs(segs, width)
}

// headerSegs: "#12 tool read · 10:04:05" and the badges that say, in words,
// what happened to the message.
func (s *styles) headerSegs(segs []seg, v sideView, seq uint64, base *session.Message, loc *time.Location) []seg {
	role := string(base.Role)
	k := s.roleInk(base.Role)
	if base.Tool != "" {
		role += " " + inertLine(base.Tool)
	}
	segs = append(segs,
		seg{text: "#" + strconv.FormatUint(seq, 10) + " ", ink: s.Dim},
		seg{text: role, ink: k},
	)
	if !base.CreatedAt.IsZero() {
		segs = append(segs, seg{text: " · " + base.CreatedAt.In(loc).Format("Jan 2 15:04:05"), ink: s.Dim})
	}
	if base.IsError {
		segs = append(segs, seg{text: " · error", ink: s.Err})
	}
	switch {
	case v.note != "":
	case unknownShown(base, v):
		segs = append(segs, seg{text: " · ? unknown source", ink: s.Unknown})
	case v.sent && redact.Placeholders(v.msg) > 0:
		n := redact.Placeholders(v.msg)
		segs = append(segs, seg{text: " · ◆ " + plural(n, "placeholder", "placeholders"), ink: s.Unknown})
	case !v.sent && (v.whole || len(v.denied) > 0):
		segs = append(segs, seg{text: " · ✗ withheld from tier " + inertLine(v.tier), ink: s.Err})
	case !v.sent && len(v.spans) > 0:
		segs = append(segs, seg{text: " · ✗ " + plural(spanCount(v.spans), "span", "spans") + " withheld", ink: s.Err})
	}
	return segs
}

// unknownShown reports whether a message's header marks it of unknown
// source: it is, and what is shown of it is not withheld.
func unknownShown(m *session.Message, v sideView) bool {
	_, unknown := m.Unknown()
	return unknown && !(v.sent && redact.Placeholders(v.msg) > 0) && !(!v.sent && (v.whole || len(v.denied) > 0 || len(v.spans) > 0))
}

func spanCount(spans map[int][]session.Filtered) int {
	n := 0
	for _, fs := range spans {
		n += len(fs)
	}
	return n
}

func (s *styles) roleInk(r session.Role) ink {
	switch r {
	case session.RoleUser:
		return s.User
	case session.RoleAssistant:
		return s.Assistant
	case session.RoleTool:
		return s.Tool
	case session.RoleEvent:
		return s.Event
	}
	return s.System
}

func (s *styles) pathSegs(segs []seg, v sideView, m *session.Message) []seg {
	paths := m.Meta.SourcePaths
	for i, p := range paths {
		if i == maxPathLines {
			segs = append(segs, seg{text: "└ … " + strconv.Itoa(len(paths)-i) + " more (e explains all)\n", ink: s.Path})
			break
		}
		k, mark := s.Path, "└ "
		if v.denied[p] || writesDenied(v.spans, p) {
			k, mark = s.Err, "└ ✗ "
		}
		segs = append(segs, seg{text: mark + inertLine(p) + "\n", ink: k})
	}
	return segs
}

func (s *styles) bodySegs(segs []seg, v sideView, m *session.Message) []seg {
	if m.Role == session.RoleEvent {
		return append(segs, seg{text: inertText(m.Text()), ink: s.Event})
	}
	for i := range m.Parts {
		pt := &m.Parts[i]
		if i > 0 {
			segs = append(segs, seg{text: "\n"})
		}
		// Every line of text starts with a mark that survives without
		// colour: ✖ a placeholder, ✗ stored content the model does not get,
		// │ content. Only Part.Redacted makes a placeholder: text that
		// merely looks like one (a file quoting it) is drawn as content.
		spans := partSpans(v, i, pt)
		text, rest := shown(pt.Text)
		switch {
		case pt.Kind == session.PartToolCall:
			input, more := shown(string(pt.Input))
			rest = more
			call := seg{text: "→ " + inertLine(pt.Name) + " " + inertText(input), ink: s.Call}
			if len(spans) > 0 || len(pt.Filtered) > 0 && v.sent {
				// A placeholder inside the input (sent), or input the
				// tier does not get (stored): the call's lines say so.
				call.gutter, call.gutterInk = s.spanMark(v.sent)
			}
			segs = append(segs, call)
		case !pt.Redacted && len(spans) > 0:
			ink := s.Text
			if m.IsError {
				ink = s.Err
			}
			segs = s.spanSegs(segs, text, spans, v.sent, ink)
		case pt.Redacted:
			segs = append(segs, seg{text: inertText(text), ink: s.Placeholder, gutter: "✖ ", gutterInk: s.Placeholder})
		case !v.sent && (v.whole || pt.SourcePath != "" && v.denied[pt.SourcePath]):
			segs = append(segs, seg{text: inertText(text), ink: s.Denied, gutter: "✗ ", gutterInk: s.Denied})
		case m.IsError:
			segs = append(segs, seg{text: inertText(text), ink: s.Err, gutter: "│ ", gutterInk: s.Dim})
		default:
			segs = append(segs, seg{text: inertText(text), gutter: "│ ", gutterInk: s.Dim})
		}
		if rest != "" {
			cmd := "scrim show"
			if v.sent {
				cmd = "scrim redact"
			}
			segs = append(segs, seg{text: "\n"}, seg{text: fmt.Sprintf("⋯ %s %s (%s): %s prints all of it",
				sizeOf(len(rest)), notShown, plural(strings.Count(rest, "\n")+1, "line", "lines"), cmd), ink: s.Event})
		}
	}
	return segs
}

// notShown is what the line under a part cut short says after the size of
// the rest (find's jump looks for it).
const notShown = "more of this part not shown here"

// maxShown is how much of a part's text a pane lays out: a part longer
// than that shows its start and a line that says what is left out. Laid
// out whole, a command output of 40 MiB (600,000 lines) took the TUI to
// 1.2 GB of memory and 5-12 s a key; a file the agent read is rarely more
// than 256 KiB (Claude Code's Read refuses bigger files without a range).
const maxShown = 1 << 20

// shown splits text where a pane stops laying it out: at the end of the
// last whole line within maxShown bytes (or at a rune's start, for a line
// longer than that), and returns the two halves ("" rest: all of it is
// shown). Spans past the split are cut off with it (spanSegs draws only
// what lies within its text).
func shown(text string) (head, rest string) {
	if len(text) <= maxShown {
		return text, ""
	}
	cut := strings.LastIndexByte(text[:maxShown], '\n')
	if cut <= 0 {
		cut = maxShown
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
	}
	return text[:cut], strings.TrimPrefix(text[cut:], "\n")
}

// sizeOf is n bytes in the unit a person reads: KiB or MiB.
func sizeOf(n int) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// partSpans returns where part i's text holds placeholders (sent side) or
// what they replace (stored side), in its Text.
func partSpans(v sideView, i int, pt *session.Part) [][2]int {
	var notes []session.Filtered
	if v.sent {
		notes = pt.Filtered
	} else {
		notes = v.spans[i]
	}
	var out [][2]int
	for _, f := range notes {
		switch {
		case f.Key >= 0:
			out = append(out, [2]int{0, 0}) // in a tool call's input: the call is marked
		case v.sent:
			out = append(out, [2]int{f.Start, f.End})
		default:
			out = append(out, [2]int{f.StoredStart, f.StoredEnd})
		}
	}
	return out
}

// spanMark is the gutter of a line with a placeholder on it (sent side) or
// with content the tier does not get (stored side).
func (s *styles) spanMark(sent bool) (string, ink) {
	if sent {
		return "✖ ", s.Placeholder
	}
	return "✗ ", s.Denied
}

// spanSegs lays out text whose spans are placeholders (sent side) or
// content the tier does not get (stored side): a line with any of them on
// it starts with that mark and draws them in its ink; other lines are
// content.
func (s *styles) spanSegs(segs []seg, text string, spans [][2]int, sent bool, content ink) []seg {
	mark, markInk := s.spanMark(sent)
	spanInk := s.Placeholder
	if !sent {
		spanInk = s.Denied
	}
	at := 0
	first := true
	for line := range strings.SplitSeq(text, "\n") {
		lo, hi := at, at+len(line)
		at = hi + 1
		if !first {
			segs = append(segs, seg{text: "\n"})
		}
		first = false
		g, gi := "│ ", s.Dim
		for _, sp := range spans {
			if sp[0] < sp[1] && sp[0] <= hi && sp[1] > lo {
				g, gi = mark, markInk
			}
		}
		piece := func(a, b int, k ink) {
			t := strings.TrimSuffix(text[a:b], "\r")
			segs = append(segs, seg{text: inertText(t), ink: k, gutter: g, gutterInk: gi})
		}
		p := lo
		for _, sp := range spans {
			a, b := max(sp[0], lo), min(sp[1], hi)
			if a >= b || a < p {
				continue
			}
			if a > p {
				piece(p, a, content)
			}
			piece(a, b, spanInk)
			p = b
		}
		if p < hi || p == lo {
			piece(p, hi, content)
		}
	}
	return segs
}

// withheld derives, from what is sent, which stored content the model does
// not get: the paths of its placeholders, or the whole message when the
// stored message is attributed as a whole (to all its paths, or to a path
// none of its parts carries).
func withheld(stored, sent *session.Message) (paths map[string]bool, whole bool) {
	if sent == nil || !slices.ContainsFunc(sent.Parts, func(p session.Part) bool { return p.Redacted }) {
		return nil, false // placeholders inside parts: see redact.StoredSpans
	}
	paths = map[string]bool{}
	whole = !stored.Attributed()
	for i := range sent.Parts {
		if p := sent.Parts[i].SourcePath; sent.Parts[i].Redacted {
			paths[p] = true
			whole = whole || !carries(stored, p)
		}
	}
	return paths, whole
}

// writesDenied reports whether spans (a stored message's, by part) hold
// a call's input withheld as content of the file at path, which it writes.
func writesDenied(spans map[int][]session.Filtered, path string) bool {
	for _, fs := range spans {
		for _, f := range fs {
			if f.Kind == "path" && f.Path == path {
				return true
			}
		}
	}
	return false
}

func carries(m *session.Message, path string) bool {
	for i := range m.Parts {
		if m.Parts[i].SourcePath == path {
			return true
		}
	}
	return false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
