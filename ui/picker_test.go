package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// The picker ranks an exact ID first, then IDs it begins, then those where
// it begins a word, then any that hold it; nothing fuzzy.
func TestPickerRanking(t *testing.T) {
	targets := []string{
		"openrouter/anthropic/claude-sonnet-4-5 catalogue",
		"anthropic/claude-sonnet-4-5-20250929 catalogue",
		"xanthropic/claude-sonnet-4-5x catalogue",
		"anthropic/claude-sonnet-4-5 catalogue",
		"meta-llama/llama-4 catalogue",
	}
	got := rankModels("anthropic/claude-sonnet-4-5", targets)
	var order []int
	for _, r := range got {
		order = append(order, r.Index)
	}
	want := []int{3, 1, 0, 2}
	if len(order) != len(want) {
		t.Fatalf("ranked %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("ranked %v, want %v", order, want)
		}
	}
	if r := rankModels("ollama", targets); len(r) != 0 {
		t.Fatalf("ollama matched %d models (fuzzy)", len(r))
	}
}

// enter on a typed whole ID uses it as typed unless a listed model has
// exactly that ID: the nearest match may be another model, of another tier.
func TestPickerUsesAnIDAsTyped(t *testing.T) {
	m := fixtureModel(t, "demo/limited")
	drive(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	items := modelItems(m.c, []ModelChoice{{ID: "anthropic/claude-sonnet-4-5-20250929"}, {ID: "demo/public"}})
	for _, c := range []struct{ typed, want string }{
		{"anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"},
		{"demo/public", "demo/public"},
		{"sonnet", "anthropic/claude-sonnet-4-5-20250929"},
	} {
		p := newPicker(m.c, items)
		p.view(120, 40)
		p.update(keyMsg("/"))
		for _, r := range c.typed {
			// the list filters in a command; deliver what it answers
			_, _, cmd := p.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
			runAll(p, cmd)
		}
		chosen, closed, _ := p.update(keyMsg("enter"))
		if !closed || chosen != c.want {
			t.Errorf("typed %q: chose %q (closed %v), want %q", c.typed, chosen, closed, c.want)
		}
	}
}

// runAll runs cmd (and the batches and commands it leads to) and hands the
// picker every message.
func runAll(p *picker, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			runAll(p, c)
		}
	case nil:
	default:
		runAll(p, p.passThrough(msg))
	}
}

// A model ID is shown whole, however long: the tier and note give way.
func TestPickerNeverCutsAnID(t *testing.T) {
	m := fixtureModel(t, "demo/limited")
	drive(m, tea.WindowSizeMsg{Width: 80, Height: 30})
	long := "openrouter/anthropic/claude-sonnet-4-5-20250929-thinking"
	p := newPicker(m.c, modelItems(m.c, []ModelChoice{{ID: long, Note: "catalogue"}, {ID: "demo/public"}}))
	v := p.view(80, 30)
	if !strings.Contains(v, long) {
		t.Fatalf("the ID is cut:\n%s", v)
	}
}
