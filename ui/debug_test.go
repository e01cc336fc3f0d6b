package ui

import (
	"fmt"
	"os"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

func TestDebugView(t *testing.T) {
	if os.Getenv("UIDEBUG") == "" {
		t.Skip()
	}
	st := openStore(t, t.TempDir())
	seedFixture(t, st)
	m := New(fixtureConfig(t, st, "demo/limited"))
	drive(m, m.Init()())
	w, h := 120, 40
	fmt.Sscanf(os.Getenv("UISIZE"), "%dx%d", &w, &h)
	drive(m, tea.WindowSizeMsg{Width: w, Height: h})
	for _, k := range strings.Fields(os.Getenv("UIKEYS")) {
		drive(m, keyMsg(k))
	}
	fmt.Println(m.View())
}
