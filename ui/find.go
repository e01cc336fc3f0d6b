package ui

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/scrim-dev/scrim/search"
	"github.com/scrim-dev/scrim/session"
)

// maxHits is how many hits a find keeps; more are counted, not kept.
const maxHits = 10_000

// finder is one find: its query, where it looks, the hits found so far and
// the one n/N are on. The search runs in a goroutine (search.Run) and
// hands hits over in batches, so the program stays responsive while it
// reads the store.
type finder struct {
	query   string
	regex   bool
	scope   string // a session ID; "" is all sessions
	model   string // hits are of what model is sent ("" the stored history)
	gen     int
	re      *regexp.Regexp // marks the matches in the panes
	hits    []search.Hit
	dropped int
	cur     int // index of the current hit; -1 before the first
	done    bool
	err     error
	cancel  context.CancelFunc
	// pending is the hit to show once its session is open.
	pending *search.Hit
}

// findMsg is a batch of hits of find gen, or its end.
type findMsg struct {
	gen  int
	hits []search.Hit
	done bool
	err  error
	next <-chan findMsg
}

// findStartMsg asks for a find (the find dialog sends it).
type findStartMsg struct {
	query, scope string
	regex        bool
}

// runFind starts the search of q and returns the command that waits for
// its first batch. Hits go out at once while few have come, then every
// 256 hits or 50 ms, so a search with many hits does not flood Update.
func runFind(ctx context.Context, st *session.Store, q search.Query, gen int) tea.Cmd {
	ch := make(chan findMsg, 4)
	send := func(m findMsg) bool {
		select {
		case ch <- m:
			return true
		case <-ctx.Done():
			return false
		}
	}
	go func() {
		defer close(ch)
		var batch []search.Hit
		last, sent := time.Now(), 0
		_, err := search.Run(ctx, st, q, func(h search.Hit) error {
			batch = append(batch, h)
			if sent < 16 || len(batch) >= 256 || time.Since(last) > 50*time.Millisecond {
				sent += len(batch)
				if !send(findMsg{gen: gen, hits: batch}) {
					return ctx.Err()
				}
				batch, last = nil, time.Now()
			}
			return nil
		})
		if len(batch) > 0 && !send(findMsg{gen: gen, hits: batch}) {
			return
		}
		send(findMsg{gen: gen, done: true, err: err})
	}()
	return waitFind(ch)
}

func waitFind(ch <-chan findMsg) tea.Cmd {
	return func() tea.Msg {
		m, ok := <-ch
		if !ok {
			return nil
		}
		m.next = ch
		return m
	}
}

// startFind begins a find of query in scope for the active model,
// replacing any find before it.
func (m *Model) startFind(msg findStartMsg) tea.Cmd {
	m.stopFind()
	re, err := search.Pattern(msg.query, msg.regex)
	if err != nil {
		m.setStatus(oneLine(err), true)
		return nil
	}
	m.findGen++
	f := &finder{query: msg.query, regex: msg.regex, scope: msg.scope, model: m.c.model, gen: m.findGen, re: re, cur: -1}
	q := search.Query{Text: msg.query, Regex: msg.regex, Model: m.c.model, Policy: m.c.pol, Contexts: m.c.ctxs}
	if msg.scope != "" {
		q.Sessions = []string{msg.scope}
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	m.find = f
	m.tr.setMark(re, f.markKey())
	m.syncFindHelp()
	m.setStatus("searching for "+inertLine(quoteQuery(msg.query))+"…", false)
	return runFind(ctx, m.c.store, q, f.gen)
}

// stopFind ends the find: its search stops, its marks go, n/N walk
// redactions again.
func (m *Model) stopFind() {
	if m.find == nil {
		return
	}
	m.find.cancel()
	m.find = nil
	m.tr.setMark(nil, "")
	m.syncFindHelp()
}

func (f *finder) markKey() string { return fmt.Sprintf("%d\x00%s", f.gen, f.query) }

func quoteQuery(q string) string { return fmt.Sprintf("%q", q) }

// gotFind takes a batch of hits; the first one is shown at once.
func (m *Model) gotFind(msg findMsg) tea.Cmd {
	f := m.find
	if f == nil || msg.gen != f.gen {
		return nil // a find that was replaced or stopped
	}
	room := max(0, maxHits-len(f.hits))
	f.hits = append(f.hits, msg.hits[:min(room, len(msg.hits))]...)
	f.dropped += len(msg.hits) - min(room, len(msg.hits))
	var cmd tea.Cmd
	if f.cur < 0 && len(f.hits) > 0 {
		cmd = m.gotoHit(0)
	}
	if msg.done {
		f.done, f.err = true, msg.err
		switch {
		case msg.err != nil:
			m.setStatus("search failed: "+oneLine(msg.err), true)
		case len(f.hits) == 0:
			m.setStatus("no match for "+inertLine(quoteQuery(f.query))+f.where(), false)
		default:
			m.hitStatus()
		}
		return cmd
	}
	if f.cur >= 0 {
		m.hitStatus()
	}
	return tea.Batch(cmd, waitFind(msg.next))
}

// where says what a find searched, for the status line.
func (f *finder) where() string {
	s := " in all sessions"
	if f.scope != "" {
		s = " in this session"
	}
	if f.model != "" {
		s += " as " + inertLine(f.model) + " is sent them"
	}
	return s
}

// hitStatus says which hit is current and what it is.
func (m *Model) hitStatus() {
	f := m.find
	if f == nil || f.cur < 0 || f.cur >= len(f.hits) {
		return
	}
	h := f.hits[f.cur]
	of := fmt.Sprint(len(f.hits))
	if !f.done {
		of += "+ (searching…)"
	} else if f.dropped > 0 {
		of += fmt.Sprintf(" (and %d more not kept)", f.dropped)
	}
	what := fmt.Sprintf("hit %d of %s · #%d %s", f.cur+1, of, h.Seq, h.Where)
	if h.Withheld {
		what += fmt.Sprintf(" · withheld from tier %q: %d in %s", inertLine(h.Tier), h.Matches, inertLine(h.WithheldIn))
	} else {
		what += fmt.Sprintf(" line %d", h.Line)
	}
	m.setStatus(what+" · n/N walk hits · esc ends the find", false)
}

// gotoHit makes hit i current: its session is opened if it is not, and
// its message is brought to the top of the panes.
func (m *Model) gotoHit(i int) tea.Cmd {
	f := m.find
	f.cur = i
	h := f.hits[i]
	m.hitStatus()
	m.focus = focusPanes
	if h.SessionID == m.tr.sid && !m.tr.opening {
		m.tr.jumpMatch(h.Seq, f.inMessage(i))
		return nil
	}
	f.pending = &h
	if h.SessionID != m.tr.sid && !m.list.selectID(h.SessionID) {
		m.setStatus("the hit's session is not in the list (filtered out?): esc clears the filter", true)
		return nil
	}
	return m.syncOpen()
}

// openedForFind shows the pending hit once its session is open.
func (m *Model) openedForFind() {
	if f := m.find; f != nil && f.pending != nil && f.pending.SessionID == m.tr.sid {
		m.tr.jumpMatch(f.pending.Seq, f.inMessage(f.cur))
		f.pending = nil
	}
}

// inMessage is how many hits before hit i are in the same message.
func (f *finder) inMessage(i int) int {
	n := 0
	for j := i - 1; j >= 0 && f.hits[j].SessionID == f.hits[i].SessionID && f.hits[j].Seq == f.hits[i].Seq; j-- {
		n++
	}
	return n
}

// walkHit moves to the next (or previous) hit, wrapping around.
func (m *Model) walkHit(forward bool) tea.Cmd {
	f := m.find
	if len(f.hits) == 0 {
		if f.done {
			m.setStatus("no match for "+inertLine(quoteQuery(f.query))+f.where(), false)
		} else {
			m.setStatus("still searching; no hit yet", false)
		}
		return nil
	}
	i := f.cur + 1
	if !forward {
		i = f.cur - 1
	}
	i = (i + len(f.hits)) % len(f.hits)
	return m.gotoHit(i)
}

// syncFindHelp names in the help what n and N do now.
func (m *Model) syncFindHelp() {
	if m.find != nil {
		m.c.keys.NextRedaction.SetHelp("n", "next hit")
		m.c.keys.PrevRedaction.SetHelp("N", "previous hit")
		return
	}
	m.syncWalkHelp()
}

// --- the find dialog ---

type findDialog struct {
	c     *common
	scope string // session ID, "" all sessions
	title string
	input textinput.Model
	regex bool
}

func newFindDialog(c *common, scope, title, last string) *findDialog {
	in := textinput.New()
	in.Prompt = "find: "
	in.SetValue(last)
	in.CharLimit = 500
	in.Cursor.SetMode(cursor.CursorStatic)
	in.Focus()
	return &findDialog{c: c, scope: scope, title: title, input: in}
}

func (d *findDialog) update(msg tea.KeyMsg) (bool, tea.Cmd) {
	switch msg.Type {
	case tea.KeyEsc, tea.KeyCtrlC:
		return true, nil
	case tea.KeyCtrlR:
		d.regex = !d.regex
		return false, nil
	case tea.KeyEnter:
		q := d.input.Value()
		if strings.TrimSpace(q) == "" {
			return false, nil
		}
		start := findStartMsg{query: q, scope: d.scope, regex: d.regex}
		return true, func() tea.Msg { return start }
	}
	var cmd tea.Cmd
	d.input, cmd = d.input.Update(msg)
	return false, cmd
}

func (d *findDialog) view(width, _ int) string {
	d.input.Width = min(width-4, 84) - 12
	mode := "text, case ignored unless you type an upper-case letter"
	if d.regex {
		mode = "RE2 regular expression (smart case)"
	}
	model := "the stored history"
	if d.c.model != "" {
		model = "what " + inertLine(d.c.model) + " is sent (withheld matches are named, not shown)"
	}
	return d.c.box(d.title, []string{d.input.View(), "",
		d.c.st.Muted.Render("searches " + model),
		d.c.st.Muted.Render("as " + mode),
		"", d.c.st.Muted.Render("enter finds · ctrl+r regular expression on/off · esc cancels")}, width)
}

func (d *findDialog) typing() bool { return true }

func (d *findDialog) ShortHelp() []key.Binding {
	return []key.Binding{
		key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "find")),
		key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "regex on/off")),
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
}

// --- marking matches in the panes ---

// markSegs splits segs so that every match of re is drawn in the Hit ink.
func (s *styles) markSegs(segs []seg, re *regexp.Regexp) []seg {
	out := make([]seg, 0, len(segs))
	for _, sg := range segs {
		ms := re.FindAllStringIndex(sg.text, -1)
		if len(ms) == 0 {
			out = append(out, sg)
			continue
		}
		at := 0
		for _, mt := range ms {
			if mt[0] == mt[1] {
				continue // an empty match marks nothing
			}
			if mt[0] > at {
				out = append(out, seg{text: sg.text[at:mt[0]], ink: sg.ink, gutter: sg.gutter, gutterInk: sg.gutterInk})
			}
			out = append(out, seg{text: sg.text[mt[0]:mt[1]], ink: s.Hit, gutter: sg.gutter, gutterInk: sg.gutterInk})
			at = mt[1]
		}
		if at < len(sg.text) {
			out = append(out, seg{text: sg.text[at:], ink: sg.ink, gutter: sg.gutter, gutterInk: sg.gutterInk})
		}
	}
	return out
}
