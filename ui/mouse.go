package ui

import (
	tea "github.com/charmbracelet/bubbletea"
)

// listItemsTop is the row of the session list's first item below its top:
// its title and the count of sessions, each with a blank line under it.
const listItemsTop = 4

// mouse handles the wheel and clicks: the wheel scrolls the view under the
// pointer (and gives it the focus), a click on a session in the list
// selects and opens it. Dialogs and the picker take the keyboard only.
func (m *Model) mouse(msg tea.MouseMsg) tea.Cmd {
	if m.dialog != nil || m.picker != nil || m.focus == focusPrompt || m.list.typing() {
		return nil
	}
	row := msg.Y - 1 // below the header
	bodyH := max(m.c.height-chromeRows-len(m.chatLines()), 3)
	if row < 0 || row >= bodyH {
		return nil
	}
	onList := m.focus == focusList
	if !m.narrow() {
		onList = msg.X < m.listWidth()
	}
	if msg.Action != tea.MouseActionPress {
		return nil
	}
	switch msg.Button {
	case tea.MouseButtonWheelUp, tea.MouseButtonWheelDown:
		name := "down"
		if msg.Button == tea.MouseButtonWheelUp {
			name = "up"
		}
		if onList {
			m.focus = focusList
			cmd, _ := m.key(keyNamed(name))
			return cmd
		}
		m.focus = focusPanes
		var cmds []tea.Cmd
		for range 3 {
			cmd, _ := m.key(keyNamed(name))
			cmds = append(cmds, cmd)
		}
		return tea.Batch(cmds...)
	case tea.MouseButtonLeft:
		if !onList {
			m.focus = focusPanes
			return nil
		}
		m.focus = focusList
		l := &m.list.l
		d := sessionDelegate{}
		per := d.Height() + d.Spacing()
		at := row - listItemsTop
		if at < 0 || at%per >= d.Height() {
			return nil
		}
		i := l.Paginator.Page*l.Paginator.PerPage + at/per
		if i >= len(l.VisibleItems()) {
			return nil
		}
		l.Select(i)
		return m.syncOpen()
	}
	return nil
}

// keyNamed is the key message of an arrow key.
func keyNamed(name string) tea.KeyMsg {
	if name == "up" {
		return tea.KeyMsg{Type: tea.KeyUp}
	}
	return tea.KeyMsg{Type: tea.KeyDown}
}
