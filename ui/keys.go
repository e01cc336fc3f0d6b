package ui

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/list"
)

// keyMap is every key binding of the program, in one place. Views pick the
// ones they handle for their ShortHelp and FullHelp.
type keyMap struct {
	// global
	Quit, Help, NextFocus, PrevFocus, Filter, Model, Rename, Delete, Chat key.Binding
	// find: the same key, in all sessions from the list, in the open one
	// from the panes; EndFind stops it
	FindAll, FindHere, EndFind key.Binding
	// moving
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	// the stored | sent panes
	NextRedaction, PrevRedaction, Walk, Explain, HideUnchanged, Layout, System key.Binding
	// list and dialogs
	Open, Choose, Close, Confirm, Refuse, Send key.Binding
}

func newKeyMap() *keyMap {
	b := func(keys []string, help, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return &keyMap{
		Quit:      b([]string{"q", "ctrl+c"}, "q", "quit"),
		Help:      b([]string{"?"}, "?", "all keys"),
		NextFocus: b([]string{"tab"}, "tab", "next view"),
		PrevFocus: b([]string{"shift+tab"}, "shift+tab", "previous view"),
		Filter:    b([]string{"/"}, "/", "filter sessions"),
		Model:     b([]string{"m"}, "m", "switch model"),
		Rename:    b([]string{"r"}, "r", "rename session"),
		Delete:    b([]string{"d"}, "d", "delete session"),
		Chat:      b([]string{"i"}, "i", "chat"),
		FindAll:   b([]string{"f"}, "f", "find in all sessions"),
		FindHere:  b([]string{"f"}, "f", "find in session"),
		EndFind:   b([]string{"esc"}, "esc", "end find"),

		Up:       b([]string{"up", "k"}, "↑/k", "up"),
		Down:     b([]string{"down", "j"}, "↓/j", "down"),
		PageUp:   b([]string{"pgup", "ctrl+u"}, "pgup ^u", "page up"),
		PageDown: b([]string{"pgdown", "ctrl+d", " "}, "pgdn ^d spc", "page down"),
		Top:      b([]string{"g", "home"}, "g", "first"),
		Bottom:   b([]string{"G", "end"}, "G", "last"),

		NextRedaction: b([]string{"n"}, "n", "next redaction"),
		PrevRedaction: b([]string{"N"}, "N", "previous redaction"),
		Walk:          b([]string{"w"}, "w", "n/N walk unknown source"),
		Explain:       b([]string{"e"}, "e", "explain message"),
		HideUnchanged: b([]string{"u"}, "u", "hide unchanged"),
		Layout:        b([]string{"s"}, "s", "stored/sent/both"),
		System:        b([]string{"p"}, "p", "system prompt & tools"),

		Open:    b([]string{"enter"}, "enter", "open"),
		Choose:  b([]string{"enter"}, "enter", "choose"),
		Close:   b([]string{"esc"}, "esc", "close"),
		Confirm: b([]string{"y"}, "y", "yes, delete"),
		Refuse:  b([]string{"n", "esc"}, "n/esc", "keep it"),
		Send:    b([]string{"enter"}, "enter", "send"),
	}
}

// listKeys maps a bubbles list onto our bindings. The list's own defaults
// bind q, d and u, which mean other things here.
func (k *keyMap) listKeys() list.KeyMap {
	km := list.DefaultKeyMap()
	km.CursorUp, km.CursorDown = k.Up, k.Down
	km.PrevPage, km.NextPage = k.PageUp, k.PageDown
	km.GoToStart, km.GoToEnd = k.Top, k.Bottom
	km.Filter = k.Filter
	km.ClearFilter = key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter"))
	km.CancelWhileFiltering = key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel"))
	km.AcceptWhileFiltering = key.NewBinding(key.WithKeys("enter", "up", "down"), key.WithHelp("enter", "apply filter"))
	km.ShowFullHelp.SetEnabled(false)
	km.CloseFullHelp.SetEnabled(false)
	km.Quit.SetEnabled(false)
	km.ForceQuit.SetEnabled(false)
	return km
}
