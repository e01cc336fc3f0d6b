package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

func mouseAt(x, y int, b tea.MouseButton) tea.MouseMsg {
	return tea.MouseMsg{X: x, Y: y, Button: b, Action: tea.MouseActionPress}
}

// The wheel scrolls the view under the pointer and a click on a session in
// the list opens it.
func TestMouseScrollsAndOpens(t *testing.T) {
	m := fixtureModel(t, "demo/limited")
	drive(m, m.Init()())
	drive(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	if n := len(m.list.l.Items()); n < 2 {
		t.Fatalf("the fixture has %d sessions; the test needs two", n)
	}
	first := m.tr.sid
	sel := m.tr.sel
	drive(m, mouseAt(80, 10, tea.MouseButtonWheelUp))
	if m.tr.sel >= sel || m.focus != focusPanes {
		t.Fatalf("wheel up over the panes: #%d (was #%d), focus %d", m.tr.sel, sel, m.focus)
	}
	// The second session's title is on row 1+listItemsTop+4 of the frame
	// (the header, the list's title and count, the first session, a gap).
	second := m.list.l.Items()[1].(sessionItem).h.Title
	if row := strings.Split(m.View(), "\n")[1+listItemsTop+4]; !strings.Contains(row, second[:min(len(second), 20)]) {
		t.Fatalf("row %d is %q, not session %q", 1+listItemsTop+4, row, second)
	}
	drive(m, mouseAt(5, 1+listItemsTop+4, tea.MouseButtonLeft))
	if m.focus != focusList || m.tr.sid == first || m.list.l.Index() != 1 {
		t.Fatalf("click on the second session: focus %d, open %s (first %s), index %d", m.focus, m.tr.sid, first, m.list.l.Index())
	}
	drive(m, mouseAt(5, 10, tea.MouseButtonWheelUp))
	if m.list.l.Index() != 0 || m.tr.sid != first {
		t.Fatalf("wheel up over the list: index %d, open %s", m.list.l.Index(), m.tr.sid)
	}
	// A click between two sessions selects nothing.
	drive(m, mouseAt(5, 1+listItemsTop+3, tea.MouseButtonLeft))
	if m.list.l.Index() != 0 {
		t.Fatalf("a click on the gap moved the list to %d", m.list.l.Index())
	}
}
