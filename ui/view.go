package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// Fixed rows: the header, the status line and the help line.
const chromeRows = 3

// listWidth is the session list's share of a wide screen.
func (m *Model) listWidth() int {
	return min(max(m.c.width/5, 26), 36)
}

// resize lays the views out for the current size, chat area and focus; it
// runs at the end of every Update so View only draws.
func (m *Model) resize() {
	w, h := m.c.width, m.c.height
	if w == 0 || h == 0 {
		return
	}
	bodyH := max(h-chromeRows-len(m.chatLines()), 3)
	layout := m.layout
	if m.narrow() && layout == layoutSplit {
		layout = layoutSent
	}
	if m.narrow() {
		m.list.setSize(w, bodyH)
		m.tr.setSize(w, bodyH-1, layout)
		return
	}
	lw := m.listWidth()
	m.list.setSize(lw, bodyH)
	m.tr.setSize(w-lw-1, bodyH-1, layout)
}

func (m *Model) chatLines() []string {
	if !m.chat.visible(m.focus == focusPrompt, m.tr.sid) {
		return nil
	}
	return m.chat.view(m.c.width, m.focus == focusPrompt, m.tr.sid)
}

// View draws the frame from state prepared by Update.
func (m *Model) View() string {
	if m.c.width == 0 || m.c.height == 0 {
		return ""
	}
	w := m.c.width
	chat := m.chatLines()
	bodyH := max(m.c.height-chromeRows-len(chat), 3)
	var body string
	switch {
	case m.dialog != nil:
		body = lipgloss.Place(w, bodyH, lipgloss.Center, lipgloss.Center, m.dialog.view(w, bodyH))
	case m.picker != nil:
		body = lipgloss.Place(w, bodyH, lipgloss.Center, lipgloss.Center, m.picker.view(w, bodyH))
	case m.loaded && len(m.list.l.Items()) == 0:
		body = lipgloss.Place(w, bodyH, lipgloss.Center, lipgloss.Center, m.welcome(w))
	case m.narrow() && m.focus == focusList:
		body = m.list.view(true, m.counter.version)
	case m.narrow():
		body = m.panesView()
	default:
		body = m.wideBody(bodyH)
	}
	lines := []string{m.header()}
	lines = append(lines, fitLines(body, w, bodyH)...)
	lines = append(lines, chat...)
	lines = append(lines, m.statusLine(), m.helpLine())
	return strings.Join(lines, "\n")
}

// fitLines makes s exactly h lines of at most w cells.
func fitLines(s string, w, h int) []string {
	ls := strings.Split(s, "\n")
	if len(ls) > h {
		ls = ls[:h]
	}
	for i, l := range ls {
		if lipgloss.Width(l) > w {
			ls[i] = ansi.Truncate(l, w, "")
		}
	}
	for len(ls) < h {
		ls = append(ls, "")
	}
	return ls
}

func (m *Model) wideBody(bodyH int) string {
	lw := m.listWidth()
	left := fitLines(m.list.view(m.focus == focusList, m.counter.version), lw, bodyH)
	right := strings.Split(m.panesView(), "\n")
	rule := m.c.st.RuleInk.wrap("│")
	var b strings.Builder
	b.Grow(bodyH * (m.c.width + 64))
	for i := range bodyH {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(padTo(left[i], lw))
		b.WriteString(rule)
		if i < len(right) {
			b.WriteString(right[i])
		}
	}
	return b.String()
}

// panesView is the pane titles and the visible rows.
func (m *Model) panesView() string {
	t := m.tr
	if t.sid == "" {
		return m.c.st.MutedInk.wrap(" No session open: choose one in the list (tab).")
	}
	rows := t.view()
	if len(rows) == 0 {
		msg := " (this session has no messages yet: press i to chat)"
		switch {
		case t.opening:
			msg = " loading…"
		case t.hide:
			msg = " No message differs from what is stored for " + inertLine(m.c.model) + ". u shows all."
		}
		rows = []string{m.c.st.MutedInk.wrap(msg)}
	}
	return m.paneTitles() + "\n" + strings.Join(rows, "\n")
}

func (m *Model) paneTitles() string {
	st, t := m.c.st, m.tr
	lw, rw := t.paneWidths()
	tst := st.TitleInk
	if m.focus == focusPanes {
		tst = st.FocusTitleInk
	}
	stored := "Stored"
	if t.hide {
		stored += " · changed only"
	}
	sent := "Sent to " + inertLine(m.c.model) + " · tier " + inertLine(m.c.tierLabel())
	if m.narrow() {
		if t.layout == layoutSent {
			sent += "  (s: stored)"
		} else {
			stored += "  (s: sent)"
		}
	}
	var b strings.Builder
	b.WriteString(" ")
	if lw > 0 {
		b.WriteString(tst.wrap(padTo(ansi.Truncate(stored, lw, "…"), lw)))
	}
	if lw > 0 && rw > 0 {
		b.WriteString(st.sep)
	}
	if rw > 0 {
		b.WriteString(tst.wrap(padTo(ansi.Truncate(sent, rw, "…"), rw)))
	}
	return b.String()
}

func (m *Model) header() string {
	st := m.c.st
	active := inertLine(m.c.model) + " " + st.tierBadge(m.c.tier())
	if m.c.model == "" {
		active = st.MutedInk.wrap("no model yet (m picks one)")
	}
	parts := []string{
		st.AppInk.wrap("scrim"),
		active,
	}
	// Narrow, the panes have no room for a title: the header names the
	// open session, before the store and policy paths, which are cut first.
	if m.c.width < 100 && m.tr.sid != "" && m.tr.title != "" {
		parts = append(parts, inertLine(m.tr.title))
	}
	parts = append(parts,
		st.MutedInk.wrap("store ")+inertLine(tildePath(m.c.storeDir)),
		st.MutedInk.wrap("policy ")+inertLine(tildePath(m.c.pol.File)),
	)
	return ansi.Truncate(" "+strings.Join(parts, "  "), m.c.width, "…")
}

// tildePath shortens the home folder to ~ for display.
func tildePath(p string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || home == "/" {
		return p
	}
	if p == home {
		return "~"
	}
	if rest, ok := strings.CutPrefix(p, home+string(filepath.Separator)); ok {
		return "~/" + rest
	}
	return p
}

// statusLine: what the active model gets redacted in the whole session,
// where the current message is, and any message for the user.
func (m *Model) statusLine() string {
	st, t := m.c.st, m.tr
	var parts []string
	if m.status != "" {
		s := ink{}
		if m.failed {
			s = st.ErrorInk
		}
		parts = append(parts, s.wrap(m.status))
	}
	if t.sid == "" || t.count == 0 {
		return ansi.Truncate(" "+strings.Join(parts, " · "), m.c.width, "…")
	}
	c := m.counter.get(countKey{t.sid, m.c.model})
	narrow := m.c.width < 100
	var where []string // the redaction walked to, the current message
	if c != nil {
		if i := t.redactionIndex(); i > 0 {
			what := "redaction "
			if t.walkUnknown {
				what = "unknown source "
			}
			where = append(where, st.KeyInk.wrap(what+strconv.Itoa(i)+"/"+strconv.Itoa(len(t.walked()))))
		}
	}
	if t.sel > 0 {
		where = append(where, "#"+strconv.FormatUint(t.sel, 10)+"/"+strconv.FormatUint(t.count, 10))
	}
	if !narrow {
		parts = append(parts, where...)
	}
	if c == nil {
		parts = append(parts, "counting redactions…")
	} else if narrow {
		// Narrow, the security counts come first and short, before where
		// the view is: cut, the line loses the position, not the counts.
		s := fmt.Sprintf("%d/%d redacted · %d denied", len(c.Redacted), t.count, len(c.Denied))
		s += filteredCounts(c)
		s += fmt.Sprintf(" · %d unknown", c.Unknown)
		if c.Upto < t.count {
			s += fmt.Sprintf(" (counted %d)", c.Upto)
		}
		parts = append(parts, s)
	} else {
		s := fmt.Sprintf("%d of %s redacted · %s denied", len(c.Redacted), plural(int(t.count), "message", "messages"), plural(len(c.Denied), "path", "paths"))
		s += filteredCounts(c)
		s += fmt.Sprintf(" · %d of unknown source", c.Unknown)
		if c.Upto < t.count {
			s += fmt.Sprintf(" (counted %d of %d)", c.Upto, t.count)
		}
		parts = append(parts, s)
	}
	if narrow {
		parts = append(parts, where...)
	}
	return ansi.Truncate(" "+strings.Join(parts, " · "), m.c.width, "…")
}

// helpLine is the focused view's keys, as many as fit; "? all keys" is
// always among them, so the rest can be found.
func (m *Model) helpLine() string {
	st := m.c.st
	var last *key.Binding
	var items []key.Binding
	for _, kb := range m.shortHelp() {
		switch {
		case !kb.Enabled():
		case kb.Help().Key == m.c.keys.Help.Help().Key:
			last = &kb
		default:
			items = append(items, kb)
		}
	}
	room := m.c.width - 2
	if last != nil {
		room -= textWidth(" • " + last.Help().Key + " " + last.Help().Desc)
	}
	var b strings.Builder
	used, cut := 0, false
	item := func(kb key.Binding) {
		h := kb.Help()
		sep := ""
		if used > 0 {
			sep = " • "
		}
		b.WriteString(st.MutedInk.wrap(sep) + st.KeyInk.wrap(h.Key) + " " + st.DescInk.wrap(h.Desc))
		used += textWidth(sep + h.Key + " " + h.Desc)
	}
	for _, kb := range items {
		h := kb.Help()
		if used+textWidth(" • "+h.Key+" "+h.Desc) > room-2 {
			cut = true
			break
		}
		item(kb)
	}
	if cut {
		b.WriteString(st.MutedInk.wrap(" …"))
		used += 2
	}
	if last != nil {
		item(*last)
	}
	return ansi.Truncate(" "+b.String(), m.c.width, "")
}

func (m *Model) welcome(width int) string {
	st := m.c.st
	rows := []string{
		"No sessions in " + inertLine(tildePath(m.c.storeDir)) + " yet. To get some:",
		"",
		st.KeyInk.wrap("scrim import claude ~/.claude/projects") + "   import Claude Code sessions",
		st.KeyInk.wrap("scrim import codex ~/.codex/sessions") + "     import Codex sessions",
		st.KeyInk.wrap("scrim new --title T") + "                     start an empty session",
		st.KeyInk.wrap("scrim demo") + "                              try scrim on a demo project",
		"",
		st.MutedInk.wrap("Then run scrim again. q quits."),
	}
	if len(m.cfg.Watching) > 0 {
		dirs := make([]string, len(m.cfg.Watching))
		for i, d := range m.cfg.Watching {
			dirs[i] = inertLine(tildePath(d))
		}
		rows[len(rows)-1] = st.MutedInk.wrap("Watching " + strings.Join(dirs, ", ") + ": transcripts written there appear here as they are written. q quits.")
	}
	return m.c.box("Welcome to scrim", wrapBlock(rows, min(width-8, 80)), width)
}

// filteredCounts is the footer's spans replaced inside parts, derived
// content and credentials, each only when there are any: a narrow status
// line has no room to spare.
func filteredCounts(c *counts) string {
	s := ""
	if c.Derived > 0 {
		s += fmt.Sprintf(" · %d derived", c.Derived)
	}
	if c.Secrets > 0 {
		s += " · " + plural(c.Secrets, "secret", "secrets")
	}
	return s
}
