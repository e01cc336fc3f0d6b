package ui

import (
	"runtime"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/scrim-dev/scrim/internal/cores"
)

// TestKeysKeepAProcessorForTheUI: in the program (Run), a key or a mouse
// event keeps a processor beyond the cores the counting is spread over
// (cores.Spare), and counting leaves a core (one step fewer at once), and
// the last one's timer gives them back; a timer of an earlier key does
// not. A model the tests drive leaves GOMAXPROCS alone.
func TestKeysKeepAProcessorForTheUI(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { cores.Spare(false); cores.Settle() })
	m := ready(t, "demo/limited", 120, 40)
	if _, cmd := m.Update(tea.KeyMsg{Type: tea.KeyUp}); cmd != nil {
		drive(m, cmd()) // the key's own commands, if any
	}
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Fatalf("a driven model changed GOMAXPROCS to %d, was %d", got, before)
	}

	m.spares = true
	m.Update(tea.KeyMsg{Type: tea.KeyUp})
	first := m.spareGen
	m.Update(tea.MouseMsg{Action: tea.MouseActionPress, Button: tea.MouseButtonWheelDown, X: 60, Y: 10})
	cores.Settle() // set beside the UI, not in its way (cores.Spare)
	if got := runtime.GOMAXPROCS(0); got != before+1 {
		t.Fatalf("at the keys: GOMAXPROCS %d, want %d", got, before+1)
	}
	if got := stepsAtOnce(); before > 1 && got != before-1 {
		t.Fatalf("at the keys: %d counting steps at once, want %d (a core left to the UI)", got, before-1)
	}
	m.Update(spareMsg{gen: first}) // an earlier key's timer
	cores.Settle()
	if got := runtime.GOMAXPROCS(0); got != before+1 {
		t.Fatalf("an earlier key's timer gave the processor back (GOMAXPROCS %d)", got)
	}
	m.Update(spareMsg{gen: m.spareGen})
	cores.Settle()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Fatalf("after the last key's timer: GOMAXPROCS %d, want %d", got, before)
	}
	if got := stepsAtOnce(); got != before {
		t.Fatalf("after the last key's timer: %d counting steps at once, want %d", got, before)
	}
}
