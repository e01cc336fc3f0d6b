package ui

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/charmbracelet/bubbles/paginator"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/scrim-dev/scrim/session"
)

// manySessions fills st with n sessions of two messages each, from several
// goroutines so that Badger can group their synced commits.
func manySessions(t testing.TB, st *session.Store, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				h, err := st.Create(session.Header{Title: fmt.Sprintf("session %d: fix the flaky test", i)})
				if err == nil {
					err = st.Append(h.ID, text(session.RoleUser, "hello"), text(session.RoleAssistant, "hi"))
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// driveInOrder is drive with the commands run in the order they were
// issued, each once the ones before it have answered, as the program's
// answers mostly come; drive runs each answer's commands before the
// commands issued beside it.
func driveInOrder(m *Model, msgs ...tea.Msg) {
	var queue []tea.Cmd
	push := func(c tea.Cmd) {
		if c != nil {
			queue = append(queue, c)
		}
	}
	for _, msg := range msgs {
		_, c := m.Update(msg)
		push(c)
	}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		switch msg := c().(type) {
		case nil, tea.QuitMsg:
		case tea.BatchMsg:
			for _, c := range msg {
				push(c)
			}
		default:
			_, next := m.Update(msg)
			push(next)
		}
	}
}

// TestCountingManySessionsLooksAtEachOnce: the counter looks for work
// among the listed sessions, most wanted first, on every Update. Once the
// sessions at the front need nothing more it starts past them, so counting
// a store of many sessions looks at each a few times, not at every one for
// every answer, and a key once all are counted looks at none.
func TestCountingManySessionsLooksAtEachOnce(t *testing.T) {
	const n = 300
	st := openStore(t, t.TempDir())
	manySessions(t, st, n)
	m := New(fixtureConfig(t, st, "demo/limited"))
	driveInOrder(m, m.Init()(), tea.WindowSizeMsg{Width: 160, Height: 45})
	for _, h := range m.list.headers() {
		c := m.counter.get(countKey{h.ID, "demo/limited"})
		if c == nil || c.Upto != h.Count {
			t.Fatalf("session %s not counted: %+v", h.ID, c)
		}
	}
	if looked := m.counter.looked; looked > 10*n {
		t.Errorf("counting %d sessions looked at a session %d times; want at most %d", n, looked, 10*n)
	}
	t.Logf("counting %d sessions looked at one %d times", n, m.counter.looked)
	before := m.counter.looked
	for range 50 {
		driveInOrder(m, tea.KeyMsg{Type: tea.KeyDown})
	}
	if looked := m.counter.looked - before; looked > 50 {
		t.Errorf("50 keys looked at a session %d times, with all %d counted; want at most one a key", looked, n)
	}

	// A session that grows is counted again: the list is set anew, and
	// the counter starts from the front.
	h := m.list.headers()[n/2]
	if err := st.Append(h.ID, text(session.RoleUser, "one more")); err != nil {
		t.Fatal(err)
	}
	driveInOrder(m, m.loadSessions()())
	if c := m.counter.get(countKey{h.ID, "demo/limited"}); c == nil || c.Upto != h.Count+1 {
		t.Fatalf("the grown session's count: %+v, want %d messages", c, h.Count+1)
	}
}

// BenchmarkKeyWithManySessions: a key's Update and the frame after it in a
// store of 10,000 sessions, all of them counted.
func BenchmarkKeyWithManySessions(b *testing.B) {
	st := openStore(b, b.TempDir())
	manySessions(b, st, 10_000)
	m := New(fixtureConfig(b, st, "demo/limited"))
	driveInOrder(m, m.Init()(), tea.WindowSizeMsg{Width: 160, Height: 45})
	keys := []tea.KeyMsg{{Type: tea.KeyDown}, {Type: tea.KeyUp}}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m.Update(keys[i%2])
		m.View()
		i++
	}
}

// TestPagesDrawnAsTheListDrawsThem: a list of more pages than it is wide
// says where it is as "n/m" without making a dot a page first (fitPages),
// and looks as the list draws it itself, colours included; with fewer, the
// dots, as before.
func TestPagesDrawnAsTheListDrawsThem(t *testing.T) {
	lipgloss.SetColorProfile(termenv.TrueColor)
	t.Cleanup(func() { lipgloss.SetColorProfile(termenv.Ascii) })
	m := fixtureModel(t, "demo/limited")
	const w, h = 40, 20
	for _, pages := range []int{3, w, w + 1, 1000} {
		m.list.setSize(w, h)
		m.list.setSessions(nil)
		per := m.list.l.Paginator.PerPage
		hs := make([]session.Header, pages*per)
		for i := range hs {
			hs[i] = session.Header{ID: fmt.Sprintf("s%05d", i), Title: fmt.Sprintf("session %d", i), Count: 2}
		}
		m.list.setSessions(hs)
		if got := m.list.l.Paginator.TotalPages; got != pages {
			t.Fatalf("%d pages, want %d", got, pages)
		}
		// The list as it is made, drawing what it chooses itself.
		m.list.l.Paginator.Type, m.list.l.Paginator.ArabicFormat = paginator.Dots, "%d/%d"
		want := m.list.l.View()
		fitPages(&m.list.l)
		if got := m.list.l.View(); got != want {
			t.Errorf("%d pages:\n%q\nthe list draws\n%q", pages, lastLine(got), lastLine(want))
		}
		if arabic := m.list.l.Paginator.Type == paginator.Arabic; arabic != (pages > w) {
			t.Errorf("%d pages in %d columns: drawn as n/m %v", pages, w, arabic)
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}
