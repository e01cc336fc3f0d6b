package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// key routes a key: an open dialog or picker takes everything; a text field
// takes everything but its own way out; then global keys; then the focused
// view. quit is true when the program should end.
func (m *Model) key(msg tea.KeyMsg) (cmd tea.Cmd, quit bool) {
	k := m.c.keys
	if m.dialog != nil {
		closed, cmd := m.dialog.update(msg)
		if closed {
			m.dialog = nil
		}
		return cmd, false
	}
	if m.picker != nil {
		chosen, closed, cmd := m.picker.update(msg)
		if closed {
			m.picker = nil
		}
		if chosen != "" {
			return tea.Batch(cmd, m.setModel(chosen)), false
		}
		return cmd, false
	}
	if m.focus == focusPrompt {
		return m.promptKey(msg), false
	}
	if m.list.typing() {
		if msg.Type == tea.KeyCtrlC {
			m.list.l.ResetFilter()
			return nil, false
		}
		cmd := m.list.update(msg)
		return tea.Batch(cmd, m.syncOpen()), false
	}
	if m.find != nil {
		switch {
		case key.Matches(msg, k.NextRedaction):
			return m.walkHit(true), false
		case key.Matches(msg, k.PrevRedaction):
			return m.walkHit(false), false
		case key.Matches(msg, k.EndFind):
			m.stopFind()
			m.setStatus("find ended; n/N walk redactions again", false)
			return nil, false
		}
	}
	m.setStatus("", false)
	switch {
	case key.Matches(msg, k.Quit):
		return nil, true
	case key.Matches(msg, k.Help):
		m.dialog = &helpDialog{c: m.c, groups: m.fullHelp()}
	case key.Matches(msg, k.NextFocus), key.Matches(msg, k.PrevFocus):
		// Two views take focus in turn; the prompt is entered with i.
		if m.focus == focusList {
			m.focus = focusPanes
		} else {
			m.focus = focusList
		}
	case key.Matches(msg, k.Filter):
		m.focus = focusList
		return m.list.startFilter(), false
	case key.Matches(msg, k.Model):
		if m.models == nil {
			m.models = modelItems(m.c, m.cfg.Models)
		}
		m.picker = newPicker(m.c, m.models)
	case key.Matches(msg, k.Chat):
		return m.startPrompt(), false
	case key.Matches(msg, k.FindAll):
		if m.focus == focusList || m.tr.sid == "" {
			m.dialog = newFindDialog(m.c, "", "Find in all sessions", m.lastQuery)
		} else {
			m.dialog = newFindDialog(m.c, m.tr.sid, "Find in this session", m.lastQuery)
		}
	case key.Matches(msg, k.Rename):
		if h, ok := m.list.selected(); ok {
			m.dialog = newRenameDialog(m.c, h)
		}
	case key.Matches(msg, k.Delete):
		if h, ok := m.list.selected(); ok {
			m.dialog = &deleteDialog{c: m.c, h: h}
		}
	case m.focus == focusList:
		if key.Matches(msg, k.Open) {
			m.focus = focusPanes
			return nil, false
		}
		cmd := m.list.update(msg)
		return tea.Batch(cmd, m.syncOpen()), false
	default:
		return m.panesKey(msg), false
	}
	return nil, false
}

func (m *Model) startPrompt() tea.Cmd {
	if m.tr.sid == "" {
		m.setStatus("open a session first, or create one: scrim new --title T", true)
		return nil
	}
	m.focus = focusPrompt
	m.chat.focus()
	return nil
}

func (m *Model) promptKey(msg tea.KeyMsg) tea.Cmd {
	ch := m.chat
	switch msg.Type {
	case tea.KeyEsc:
		m.focus = focusPanes
		ch.blur()
		return nil
	case tea.KeyCtrlC:
		// While typing, ctrl+c never quits: it stops a running turn, or
		// clears the line, or leaves the prompt.
		switch {
		case ch.sending:
			ch.stop()
		case ch.input.Value() != "":
			ch.input.Reset()
		default:
			m.focus = focusPanes
			ch.blur()
		}
		return nil
	case tea.KeyEnter:
		text := strings.TrimSpace(ch.input.Value())
		switch {
		case text == "":
			return nil
		case ch.sending:
			m.setStatus("wait for the answer, or ctrl+c to stop it", true)
			return nil
		case m.cfg.Sender == nil:
			m.setStatus("chat needs a provider: configure one in providers.toml (see README)", true)
			return nil
		}
		ch.input.Reset()
		return ch.start(m.cfg.Sender, m.tr.sid, m.c.model, text)
	}
	var cmd tea.Cmd
	ch.input, cmd = ch.input.Update(msg)
	return cmd
}

// keystrokes are the keys msg holds. Bubble Tea (v1) reports the
// printable runes of one read of the terminal as one message: keys typed
// faster than it reads them — a held j while a count keeps both cores
// busy, tmux send-keys g n — came as "jj" or "gn", which matched no key
// and were lost. They are taken one by one, as typed; a paste (the
// terminal marks it) stays text.
func keystrokes(msg tea.KeyMsg) []tea.KeyMsg {
	if msg.Type != tea.KeyRunes || msg.Paste || len(msg.Runes) < 2 {
		return []tea.KeyMsg{msg}
	}
	out := make([]tea.KeyMsg, len(msg.Runes))
	for i, r := range msg.Runes {
		// An alt prefix (an escape before the run) is the first key's.
		out[i] = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt && i == 0}
	}
	return out
}

// maxEarlyKeys bounds the keys kept while a session opens (a held key
// repeats fast; the open takes a tenth of a second).
const maxEarlyKeys = 32

// panesKey handles the stored | sent panes' own keys.
func (m *Model) panesKey(msg tea.KeyMsg) tea.Cmd {
	k, t := m.c.keys, m.tr
	if t.opening {
		if len(t.early) < maxEarlyKeys {
			t.early = append(t.early, msg)
		}
		return nil
	}
	t.follow = false
	switch {
	case key.Matches(msg, k.Down):
		t.down()
	case key.Matches(msg, k.Up):
		t.up()
	case key.Matches(msg, k.PageDown):
		t.pageDown()
	case key.Matches(msg, k.PageUp):
		t.pageUp()
	case key.Matches(msg, k.Top):
		t.home()
	case key.Matches(msg, k.Bottom):
		t.end()
	case key.Matches(msg, k.NextRedaction):
		m.redactionStatus(t.nextRedaction())
	case key.Matches(msg, k.PrevRedaction):
		m.redactionStatus(t.prevRedaction())
	case key.Matches(msg, k.Walk):
		t.walkUnknown = !t.walkUnknown
		m.syncWalkHelp()
		if t.walkUnknown {
			m.setStatus("n/N now walk messages of unknown source (sent unchecked); w: back to redactions", false)
		} else {
			m.setStatus("n/N now walk redactions", false)
		}
	case key.Matches(msg, k.Explain):
		return m.explainCurrent()
	case key.Matches(msg, k.HideUnchanged):
		t.setHide(!t.hide)
	case key.Matches(msg, k.Layout):
		m.layout = m.nextLayout()
	case key.Matches(msg, k.System):
		t.toggleSystem()
	case key.Matches(msg, k.Open):
		// enter on the panes: nothing to open; keep it harmless.
	}
	return nil
}

// syncWalkHelp names in the help what n, N and w do now.
func (m *Model) syncWalkHelp() {
	k := m.c.keys
	if m.tr.walkUnknown {
		k.NextRedaction.SetHelp("n", "next unknown source")
		k.PrevRedaction.SetHelp("N", "previous unknown source")
		k.Walk.SetHelp("w", "n/N walk redactions")
		return
	}
	k.NextRedaction.SetHelp("n", "next redaction")
	k.PrevRedaction.SetHelp("N", "previous redaction")
	k.Walk.SetHelp("w", "n/N walk unknown source")
}

func (m *Model) redactionStatus(found, wrapped bool) {
	c := m.counter.get(countKey{m.tr.sid, m.c.model})
	counting := c == nil || c.Upto < m.tr.count
	switch {
	case !found && counting:
		m.setStatus("still counting; try again in a moment", false)
	case !found && m.tr.walkUnknown:
		m.setStatus("nothing of unknown source is sent unchecked to "+inertLine(m.c.model)+" in this session", false)
	case !found:
		m.setStatus("nothing is redacted for "+inertLine(m.c.model)+" in this session", false)
	case wrapped && counting:
		m.setStatus("wrapped around (still counting, more may come)", false)
	case wrapped:
		m.setStatus("wrapped around", false)
	}
}

// nextLayout cycles split → sent → stored; narrow screens skip split.
func (m *Model) nextLayout() paneLayout {
	cur := m.tr.layout
	switch {
	case cur == layoutSplit:
		return layoutSent
	case cur == layoutSent:
		return layoutStored
	case m.narrow():
		return layoutSent
	}
	return layoutSplit
}

func (m *Model) explainCurrent() tea.Cmd {
	_, e := m.tr.entry(m.tr.sel)
	if e == nil || e.msg == nil {
		m.setStatus("nothing to explain here yet", false)
		return nil
	}
	return explain(m.c.store, m.c.pol, m.tr.sid, *e.msg, e.sent, m.c.model)
}

// syncHideHelp names what u does now: hide the unchanged messages, or
// show all of them again.
func (m *Model) syncHideHelp() {
	if m.tr.hide {
		m.c.keys.HideUnchanged.SetHelp("u", "show all")
	} else {
		m.c.keys.HideUnchanged.SetHelp("u", "hide unchanged")
	}
}

func (m *Model) panesShortHelp() []key.Binding {
	m.syncHideHelp()
	k := m.c.keys
	keys := []key.Binding{k.Up, k.Down, k.NextRedaction, k.PrevRedaction}
	if m.find != nil {
		keys = append(keys, k.EndFind)
	}
	return append(keys, k.Explain, k.HideUnchanged, k.FindHere, k.Layout, k.Model, k.Chat, k.NextFocus, k.Help, k.Quit)
}

func (m *Model) panesFullHelp() [][]key.Binding {
	m.syncHideHelp()
	k := m.c.keys
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.NextRedaction, k.PrevRedaction, k.Walk, k.FindHere, k.EndFind, k.Explain, k.HideUnchanged, k.Layout, k.System},
		{k.Model, k.Chat, k.Filter, k.Rename, k.Delete, k.NextFocus, k.PrevFocus, k.Help, k.Quit},
	}
}
