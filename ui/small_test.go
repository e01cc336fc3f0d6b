package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// Tiny and odd sizes never panic and never draw wider than the screen.
func TestTinyScreens(t *testing.T) {
	m := ready(t, "demo/limited", 120, 40)
	for _, size := range [][2]int{{20, 6}, {1, 1}, {40, 10}, {99, 12}, {100, 12}, {250, 80}} {
		drive(m, tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		for _, k := range []string{"j", "k", "pgdown", "G", "g", "n", "s", "u", "u", "?", "esc", "m", "esc", "e", "esc", "tab", "tab"} {
			drive(m, keyMsg(k))
			v := m.View()
			lines := strings.Split(v, "\n")
			if len(lines) > max(size[1], 6) {
				t.Fatalf("%dx%d after %s: %d lines", size[0], size[1], k, len(lines))
			}
			for _, l := range lines {
				if w := textWidth(l); w > max(size[0], 12) {
					t.Fatalf("%dx%d after %s: line %d wide: %q", size[0], size[1], k, w, l)
				}
			}
		}
	}
}
