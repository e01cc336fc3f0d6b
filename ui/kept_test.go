package ui

import (
	"reflect"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/scrim-dev/scrim/runner"
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
	if c1 == nil || c1.Upto != 2500 || len(c1.Redacted) == 0 {
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
	if c2 == nil || c2.Upto != 2500 {
		t.Fatalf("second run's counts: %+v", c2)
	}
	if steps != 0 {
		t.Fatalf("the second run counted %d steps; the kept count should have been read", steps)
	}
	if !reflect.DeepEqual(c2.Redacted, c1.Redacted) || !reflect.DeepEqual(c2.Denied, c1.Denied) || c2.Unknown != c1.Unknown || c2.Sent != c1.Sent {
		t.Fatalf("kept counts differ: %d/%d redacted, %d/%d denied", len(c2.Redacted), len(c1.Redacted), len(c2.Denied), len(c1.Denied))
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

// TestCountStepsOutOfOrder: steps run at once and come back in any order;
// the count they make is the one a step at a time makes.
func TestCountStepsOutOfOrder(t *testing.T) {
	st := openStore(t, t.TempDir())
	sid := bigSession(t, st, 5*countChunk+100)
	m := New(fixtureConfig(t, st, "demo/limited"))
	jobs := []countJob{{sid, 5*countChunk + 100}}
	run := func(workers int, reverse bool) *counts {
		saved := countWorkers
		countWorkers = workers
		defer func() { countWorkers = saved }()
		k := newCounter()
		k.kept[countKey{sid, "demo/limited"}] = &keptState{loaded: true} // count, do not read back
		for {
			cmd := k.next(m.c.ctxs, st, m.c.pol, "demo/limited", countJobs{n: len(jobs), at: func(i int) countJob { return jobs[i] }})
			if cmd == nil {
				break
			}
			var msgs []tea.Msg
			if batch, ok := cmd().(tea.BatchMsg); ok {
				for _, c := range batch {
					msgs = append(msgs, c())
				}
			} else {
				msgs = append(msgs, cmd())
			}
			if reverse {
				for i, j := 0, len(msgs)-1; i < j; i, j = i+1, j-1 {
					msgs[i], msgs[j] = msgs[j], msgs[i]
				}
			}
			for _, msg := range msgs {
				k.take(msg.(countsMsg))
			}
		}
		return k.get(countKey{sid, "demo/limited"})
	}
	one, many := run(1, false), run(4, true)
	if one == nil || many == nil || one.Upto != 5*countChunk+100 || many.Upto != one.Upto {
		t.Fatalf("counts: one at a time %+v, four at once %+v", one, many)
	}
	if !reflect.DeepEqual(one.Redacted, many.Redacted) || !reflect.DeepEqual(one.Denied, many.Denied) ||
		one.Unknown != many.Unknown || one.Sent != many.Sent || len(one.chunks) != len(many.chunks) {
		t.Fatalf("out of order: %d/%d redacted, %d/%d denied, %d/%d sent", len(many.Redacted), len(one.Redacted), len(many.Denied), len(one.Denied), many.Sent, one.Sent)
	}
}

// TestSystemEntry: above message 1 the sent side shows what goes before the
// history — the system prompt and the tools the active model's tier is
// offered — as one line that p opens and closes.
func TestSystemEntry(t *testing.T) {
	st := openStore(t, t.TempDir())
	bigSession(t, st, 3)
	m := New(fixtureConfig(t, st, "demo/trusted"))
	drive(m, m.Init()())
	drive(m, tea.WindowSizeMsg{Width: 160, Height: 40})
	drive(m, keys("g")...)
	view := m.View()
	if !strings.Contains(view, "▸ system prompt, tools: read, grep, glob") || strings.Contains(view, runner.DefaultSystem[:40]) {
		t.Fatalf("closed entry:\n%s", view)
	}
	drive(m, keys("p")...)
	view = flatView(m.View())
	for _, want := range []string{"▾ sent before the history", runner.DefaultSystem[:40], "tool read:", "tool glob:"} {
		if !strings.Contains(view, want) {
			t.Fatalf("open entry lacks %q:\n%s", want, m.View())
		}
	}
	drive(m, keys("p")...)
	if strings.Contains(m.View(), "▾ sent before") {
		t.Fatal("p does not close the entry")
	}
}

// flatView joins the rows of a frame, so that text wrapped at a space is
// found whole.
func flatView(v string) string {
	var parts []string
	for _, line := range strings.Split(v, "\n") {
		for _, cell := range strings.Split(line, "│") {
			if c := strings.TrimSpace(cell); c != "" {
				parts = append(parts, c)
			}
		}
	}
	return strings.Join(parts, " ")
}
