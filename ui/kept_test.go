package ui

import (
	"reflect"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// TestCountsKeptAcrossRestarts: the whole-session counts a TUI computed are
// kept in the store; a TUI started again on it shows them without counting
// a step, and counts only what was appended since.
func TestCountsKeptAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	sid := bigSession(t, st, 2500)
	first := New(fixtureConfig(t, st, "demo/limited"))
	drive(first, first.Init()())
	drive(first, tea.WindowSizeMsg{Width: 120, Height: 40})
	c1 := first.counter.get(countKey{sid, "demo/limited"})
	if c1 == nil || c1.upto != 2500 || len(c1.redacted) == 0 {
		t.Fatalf("first run's counts: %+v", c1)
	}

	second := New(fixtureConfig(t, st, "demo/limited"))
	steps := 0
	msgs := []tea.Msg{second.Init()(), tea.WindowSizeMsg{Width: 120, Height: 40}}
	for _, msg := range msgs {
		_, cmd := second.Update(msg)
		runCounting(second, cmd, &steps)
	}
	c2 := second.counter.get(countKey{sid, "demo/limited"})
	if c2 == nil || c2.upto != 2500 {
		t.Fatalf("second run's counts: %+v", c2)
	}
	if steps != 0 {
		t.Fatalf("the second run counted %d steps; the kept count should have been read", steps)
	}
	if !reflect.DeepEqual(c2.redacted, c1.redacted) || !reflect.DeepEqual(c2.denied, c1.denied) || c2.unknown != c1.unknown || c2.sent != c1.sent {
		t.Fatalf("kept counts differ: %d/%d redacted, %d/%d denied", len(c2.redacted), len(c1.redacted), len(c2.denied), len(c1.denied))
	}
}

// runCounting is runCmd counting the counting steps that run.
func runCounting(m *Model, cmd tea.Cmd, steps *int) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			runCounting(m, c, steps)
		}
	case tea.QuitMsg:
	default:
		if _, ok := msg.(countsMsg); ok {
			*steps++
		}
		_, next := m.Update(msg)
		runCounting(m, next, steps)
	}
}
