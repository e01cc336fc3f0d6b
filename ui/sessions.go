package ui

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/list"
	"github.com/charmbracelet/bubbles/paginator"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/scrim-dev/scrim/session"
)

type sessionItem struct{ h session.Header }

func (i sessionItem) FilterValue() string {
	return i.h.Title + " " + i.h.ID + " " + i.h.LastModel
}

// sessionDelegate draws a session in three lines: its title; its message
// count and, once counted, how many of them the active model would get
// redacted; its last model and age.
type sessionDelegate struct {
	c     *common
	badge func(session.Header) string
}

func (d sessionDelegate) Height() int                         { return 3 }
func (d sessionDelegate) Spacing() int                        { return 1 }
func (d sessionDelegate) Update(tea.Msg, *list.Model) tea.Cmd { return nil }

func (d sessionDelegate) Render(w io.Writer, m list.Model, index int, item list.Item) {
	it, ok := item.(sessionItem)
	if !ok {
		return
	}
	st, width := d.c.st, m.Width()
	title := inertLine(it.h.Title)
	if title == "" {
		title = "(untitled " + shortID(it.h.ID) + ")"
	}
	counts := plural(int(it.h.Count), "msg", "msgs")
	if b := d.badge(it.h); b != "" {
		counts += " · " + b
	}
	info := age(d.c.now(), it.h.UpdatedAt)
	if it.h.LastModel != "" {
		info = inertLine(it.h.LastModel) + " · " + info
	}
	mark, tst := "  ", st.Title
	if index == m.Index() {
		mark, tst = st.Selected.wrap("▌")+" ", st.FocusTitle
	}
	fmt.Fprintf(w, "%s%s\n%s%s\n%s%s", mark, tst.Render(ansi.Truncate(title, width-2, "…")),
		mark, ansi.Truncate(counts, width-2, "…"),
		mark, st.Muted.Render(ansi.Truncate(info, width-2, "…")))
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// age is how long ago t was, in the largest unit that fits.
func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m ago"
	case d < 24*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h ago"
	case d < 30*24*time.Hour:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d ago"
	}
	return t.Format("2006-01-02")
}

// sessionList is the session list with filtering (a bubbles list).
type sessionList struct {
	c *common
	l list.Model

	w, h    int
	version int    // bumped on every change to the list itself
	items   uint64 // bumped whenever the sessions listed are set
	cache   string
	cacheAt viewKey
}

// viewKey is everything the list's look depends on besides the list.
type viewKey struct {
	version, counted int
	focused          bool
	model            string
	minute           time.Time
}

// newList makes a bubbles list the way the TUI's lists are: our keys
// (listKeys), no quit keys and no help of its own (the footer shows help), a
// filter cursor that does not blink, and a blank line under the title and
// under the status bar, which counts items as singular or plural; indent is
// how far both stand in. The caller gives the title and its style.
func newList(c *common, items []list.Item, d list.ItemDelegate, width, height, indent int, singular, plural string) list.Model {
	l := list.New(items, d, width, height)
	l.KeyMap = c.keys.listKeys()
	l.DisableQuitKeybindings()
	l.SetShowHelp(false)
	l.SetStatusBarItemName(singular, plural)
	l.FilterInput.Cursor.SetMode(cursor.CursorStatic)
	l.Styles.TitleBar = lipgloss.NewStyle().Padding(0, 0, 1, indent)
	l.Styles.StatusBar = c.st.Muted.Padding(0, 0, 1, indent)
	return l
}

func newSessionList(c *common, badge func(session.Header) string) sessionList {
	l := newList(c, nil, sessionDelegate{c: c, badge: badge}, 30, 10, 1, "session", "sessions")
	l.Title = "Sessions"
	l.Styles.Title = c.st.Title
	l.Styles.NoItems = c.st.Muted.Padding(0, 0, 0, 1)
	return sessionList{c: c, l: l}
}

// setSessions replaces the items, keeping the selected session if it is
// still there.
func (s *sessionList) setSessions(hs []session.Header) tea.Cmd {
	cur, _ := s.selected()
	items := make([]list.Item, len(hs))
	sel := 0
	for i, h := range hs {
		items[i] = sessionItem{h}
		if h.ID == cur.ID {
			sel = i
		}
	}
	s.version++
	s.items++
	cmd := s.l.SetItems(items)
	if !s.l.IsFiltered() {
		s.l.Select(sel)
	}
	return cmd
}

func (s *sessionList) selected() (session.Header, bool) {
	it, ok := s.l.SelectedItem().(sessionItem)
	return it.h, ok
}

func (s *sessionList) typing() bool { return s.l.SettingFilter() }

func (s *sessionList) setSize(w, h int) {
	if w != s.w || h != s.h {
		s.w, s.h = w, h
		s.version++
		s.l.SetSize(w, h)
	}
}

func (s *sessionList) update(msg tea.Msg) tea.Cmd {
	s.version++
	var cmd tea.Cmd
	s.l, cmd = s.l.Update(msg)
	return cmd
}

// selectID selects session id; false when the list does not show it.
func (s *sessionList) selectID(id string) bool {
	for i, it := range s.l.VisibleItems() {
		if si, ok := it.(sessionItem); ok && si.h.ID == id {
			s.version++
			s.l.Select(i)
			return true
		}
	}
	return false
}

// startFilter puts the list in filtering mode, as if / were pressed in it.
func (s *sessionList) startFilter() tea.Cmd {
	return s.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'/'}})
}

// view draws the list; the bubbles list renders every item each time, so
// the result is kept until something it shows changes. counted is the
// counter's version (badges).
func (s *sessionList) view(focused bool, counted int) string {
	k := viewKey{version: s.version, counted: counted, focused: focused, model: s.c.model, minute: s.c.now().Truncate(time.Minute)}
	if k == s.cacheAt && s.cache != "" {
		return s.cache
	}
	if focused {
		s.l.Styles.Title = s.c.st.FocusTitle
		s.l.Title = "▸ Sessions"
	} else {
		s.l.Styles.Title = s.c.st.Title
		s.l.Title = "Sessions"
	}
	fitPages(&s.l)
	s.cache, s.cacheAt = s.l.View(), k
	return s.cache
}

// fitPages has l draw where it is as "n/m" when a dot a page would be
// wider than it, as l itself does, but without making the dots first: l
// adds them to a string one at a time, and drew ten thousand sessions
// (1,112 pages) that way on every frame while they were counted, 15 of the
// TUI's 41 CPU-s. The "n/m" is styled as l styles its own.
func fitPages(l *list.Model) {
	if l.Paginator.TotalPages > l.Width() {
		l.Paginator.Type = paginator.Arabic
		l.Paginator.ArabicFormat = l.Styles.ArabicPagination.Render("%d/%d")
	} else {
		l.Paginator.Type, l.Paginator.ArabicFormat = paginator.Dots, "%d/%d"
	}
}

func (s *sessionList) ShortHelp() []key.Binding {
	k := s.c.keys
	if s.typing() {
		return []key.Binding{
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply filter")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		}
	}
	return []key.Binding{k.Up, k.Down, k.Open, k.Filter, k.FindAll, k.Model, k.Chat, k.Rename, k.Delete, k.NextFocus, k.Help, k.Quit}
}

func (s *sessionList) FullHelp() [][]key.Binding {
	k := s.c.keys
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Open, k.Filter, k.FindAll, k.Rename, k.Delete},
		{k.Model, k.Chat, k.NextFocus, k.PrevFocus, k.Help, k.Quit},
	}
}
