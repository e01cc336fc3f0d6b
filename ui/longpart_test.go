package ui

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/scrim-dev/scrim/session"
)

// A part longer than maxShown shows its start and a line that says how
// much is left out and which command prints it, on both sides; what is
// redacted past the cut stays out of the pane (a credential near the end
// of a 3 MiB output); a part just under the bound shows whole.
func TestLongPartShowsItsStart(t *testing.T) {
	st := openStore(t, t.TempDir())
	h, err := st.Create(session.Header{Title: "a long output"})
	if err != nil {
		t.Fatal(err)
	}
	var long strings.Builder
	for i := 0; long.Len() < 3<<20; i++ {
		fmt.Fprintf(&long, "log line %d: request handled\n", i)
	}
	long.WriteString("GITHUB_TOKEN=" + spanPAT + "\nthe very last line")
	var under strings.Builder
	for i := 0; under.Len() < maxShown-100; i++ {
		fmt.Fprintf(&under, "short line %d\n", i)
	}
	under.WriteString("the end of the shorter output")
	msgs := []*session.Message{
		text(session.RoleUser, "print the logs"),
		call("c1", "bash", map[string]any{"command": "cat app.log"}, ""),
		result("c1", "bash", "", long.String()),
		call("c2", "bash", map[string]any{"command": "cat short.log"}, ""),
		result("c2", "bash", "", under.String()),
	}
	if err := st.Append(h.ID, msgs...); err != nil {
		t.Fatal(err)
	}
	m := New(fixtureConfig(t, st, "demo/limited"))
	drive(m, m.Init()())
	drive(m, tea.WindowSizeMsg{Width: 160, Height: 45})
	drive(m, keys("G")...)

	rows := strings.Join(m.tr.rows(3), "\n")
	plain := unmarked(rows)
	if !strings.Contains(plain, "log line 0: request handled") {
		t.Fatalf("the start of the long output is not shown:\n%.2000s", plain)
	}
	for _, gone := range []string{"the very last line", spanPAT, "Secret filtered"} {
		if strings.Contains(plain, gone) {
			t.Errorf("%q, past the cut, is shown", gone)
		}
	}
	for _, want := range []string{"more of this part not shown here", "scrim show prints all of it", "scrim redact prints all of it"} {
		if !strings.Contains(plain, want) {
			t.Errorf("the long output's panes lack %q", want)
		}
	}
	if n := strings.Count(rows, "\n") + 1; n > 2*maxShown/20 {
		t.Errorf("the long output takes %d rows", n)
	}
	// A find's hit past the cut brings the line that says so into view.
	drive(m, keys("g", "f", "the very last line", "enter")...)
	if m.find == nil || !m.find.done || len(m.find.hits) == 0 {
		t.Fatalf("find: %+v", m.find)
	}
	if view := unmarked(m.View()); !strings.Contains(view, notShown) {
		t.Errorf("the find's hit past the cut does not show the cut:\n%s", view)
	}
	short := unmarked(strings.Join(m.tr.rows(5), "\n"))
	if !strings.Contains(short, "the end of the shorter output") || strings.Contains(short, "not shown here") {
		t.Errorf("the output under %d bytes is not shown whole", maxShown)
	}
}
