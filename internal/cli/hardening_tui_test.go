//go:build unix

package cli

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/ui"
)

// framed keeps every frame the TUI draws, so a test can wait for one and
// check all of them, not only the last.
type framed struct {
	tea.Model
	last   *atomic.Value
	frames *[]string
}

func (f framed) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m, cmd := f.Model.Update(msg)
	f.Model = m
	return f, cmd
}

func (f framed) View() string {
	v := f.Model.View()
	f.last.Store(v)
	*f.frames = append(*f.frames, v)
	return v
}

// TestTerminalSafetyTUI renders a session whose content, file names and
// title are hostile through the ui package's model and checks every frame:
// no escape, CR, BS, bidi or zero-width character from content reaches the
// screen, whichever pane, model or dialog shows it.
func TestTerminalSafetyTUI(t *testing.T) {
	t.Parallel()
	lipgloss.SetColorProfile(termenv.Ascii) // frames hold only what content put there
	f := newAdvFixture(t)
	f.write(t, "public/evil.txt", evilText)
	f.write(t, "secrets/"+evilName, "SECRET-evil-name\n")
	for _, args := range [][]string{
		{"read", "public/evil.txt"},
		{"read", "secrets/" + evilName},
		{"bash", "--", "cat", "public/evil.txt"},
	} {
		if _, stderr, code := f.tool(t, "demo/trusted", args); code != exitOK {
			t.Fatalf("%v: %s", args, stderr)
		}
	}
	st, err := session.Open(f.store)
	must(t, err)
	defer st.Close()
	must(t, st.Rename(f.session, "title \x1b]0;pwned\x07 \u202eevil\u202c\r\x1b[2J"))
	pol, err := (&app{policyFile: f.policy}).Policy()
	must(t, err)

	var last atomic.Value
	last.Store("")
	var frames []string
	m := framed{Model: ui.New(ui.Config{Store: st, StoreDir: f.store, Policy: pol, Model: "demo/trusted",
		Models: []ui.ModelChoice{{ID: "demo/trusted"}, {ID: "demo/limited"}}}), last: &last, frames: &frames}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(140, 45))
	wait := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(last.Load().(string), want) {
			if time.Now().After(deadline) {
				t.Fatalf("no frame shows %q; last:\n%s", want, last.Load())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	key := func(k string) { tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}) }
	wait("pwned-title")
	for range 12 { // page through the history
		tm.Send(tea.KeyMsg{Type: tea.KeyPgDown})
	}
	key("e") // explain
	time.Sleep(200 * time.Millisecond)
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
	key("m") // switch to the limited model: placeholders with the evil name
	time.Sleep(200 * time.Millisecond)
	tm.Send(tea.KeyMsg{Type: tea.KeyDown})
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	wait("limited")
	for range 12 {
		tm.Send(tea.KeyMsg{Type: tea.KeyPgDown})
	}
	time.Sleep(300 * time.Millisecond)
	must(t, tm.Quit())
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))

	if len(frames) < 3 {
		t.Fatalf("only %d frames drawn", len(frames))
	}
	shown := false
	for i, fr := range frames {
		checkInert(t, "TUI frame "+string(rune('0'+i%10)), fr)
		shown = shown || strings.Contains(fr, "␛]0;pwned-title␇")
	}
	if !shown {
		t.Errorf("no frame showed the hostile content as visible symbols")
	}
}
