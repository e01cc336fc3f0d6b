package ui

import (
	"context"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/scrim-dev/scrim/runner"
	"github.com/scrim-dev/scrim/session"
)

// chatEvent is what the sending goroutine reports: a notice of the runner,
// or the end of the turn.
type chatEvent struct {
	delta runner.Delta
	done  bool
	err   error
}

// chatDeltaMsg and chatDoneMsg carry the session they belong to: the user
// may have opened another session while the answer streams in.
type chatDeltaMsg struct {
	sid    string
	delta  runner.Delta
	events <-chan chatEvent
}

type chatDoneMsg struct {
	sid, model string
	err        error
}

// chat is the prompt line and the answer streaming in.
type chat struct {
	c       *common
	input   textinput.Model
	sending bool
	sid     string // session of the turn in progress or last shown
	model   string
	prompt  string
	// promptStored: the turn stored the prompt in the session; a failed
	// turn whose prompt was not stored gives it back to the input.
	promptStored bool
	reply        strings.Builder
	err          string
	cancel       context.CancelFunc
}

func newChat(c *common) *chat {
	in := textinput.New()
	in.Prompt = "› "
	in.Placeholder = "ask the active model; enter sends, esc leaves the prompt"
	in.CharLimit = 8000
	in.Cursor.SetMode(cursor.CursorStatic)
	return &chat{c: c, input: in}
}

// start runs one turn in a goroutine; its events come back one by one
// through waitChat.
func (ch *chat) start(s Sender, sid, model, prompt string) tea.Cmd {
	ctx, cancel := context.WithCancel(context.Background())
	ch.sending, ch.sid, ch.model, ch.prompt, ch.err, ch.cancel = true, sid, model, prompt, "", cancel
	ch.promptStored = false
	ch.reply.Reset()
	events := make(chan chatEvent, 256)
	go func() {
		defer cancel()
		err := s.Send(ctx, sid, model, prompt, func(d runner.Delta) { events <- chatEvent{delta: d} })
		events <- chatEvent{done: true, err: err}
	}()
	return waitChat(sid, model, events)
}

func waitChat(sid, model string, events <-chan chatEvent) tea.Cmd {
	return func() tea.Msg {
		ev := <-events
		if ev.done {
			return chatDoneMsg{sid: sid, model: model, err: ev.err}
		}
		return chatDeltaMsg{sid: sid, delta: ev.delta, events: events}
	}
}

// note adds a runner notice to what streams in; it reports whether a
// message was stored (the session should be reloaded to show it).
func (ch *chat) note(d runner.Delta) (stored bool) {
	switch d.Kind {
	case runner.DeltaText:
		ch.reply.WriteString(d.Text)
	case runner.DeltaSwitch:
		ch.line("— " + d.Text)
	case runner.DeltaToolStart:
		ch.line("→ " + d.Tool + " " + d.Input)
	case runner.DeltaToolFinish:
		state := "✓"
		if d.Denied || d.IsError {
			state = "✗"
		}
		ch.line(state + " " + d.Tool + ": " + d.Text)
	case runner.DeltaStored:
		// What was streamed is now in the session, shown in the panes.
		if d.Message != nil && d.Message.Role == session.RoleAssistant {
			ch.reply.Reset()
		}
		if d.Message != nil && d.Message.Role == session.RoleUser {
			ch.promptStored = true
		}
		return true
	}
	return false
}

func (ch *chat) line(s string) {
	if ch.reply.Len() > 0 && !strings.HasSuffix(ch.reply.String(), "\n") {
		ch.reply.WriteByte('\n')
	}
	ch.reply.WriteString(s + "\n")
}

func (ch *chat) stop() {
	if ch.cancel != nil {
		ch.cancel()
	}
}

func (ch *chat) focus() { ch.input.Focus() }
func (ch *chat) blur()  { ch.input.Blur() }

// visible says whether the chat area takes rows for session sid.
func (ch *chat) visible(focused bool, sid string) bool {
	return focused || ch.sid == sid && (ch.sending || ch.reply.Len() > 0 || ch.err != "")
}

// view is the chat area: the answer's last lines, then the prompt line.
func (ch *chat) view(width int, focused bool, sid string) []string {
	var out []string
	if ch.sid == sid && (ch.sending || ch.reply.Len() > 0 || ch.err != "") {
		text := inertText(ch.reply.String())
		if ch.sending && text == "" {
			text = "…"
		}
		lines := wrapSegs([]seg{{text: inertLine(ch.model) + ": ", ink: ch.c.st.Assistant}, {text: text}}, max(width-2, 10))
		if ch.err != "" {
			lines = wrapSegs([]seg{{text: "✗ " + ch.err, ink: ch.c.st.Err}}, max(width-2, 10))
		}
		if len(lines) > 3 {
			lines = lines[len(lines)-3:]
		}
		for _, l := range lines {
			out = append(out, " "+l.render(width-1))
		}
	}
	if focused {
		ch.input.Width = max(width-4, 10)
		out = append(out, " "+ch.input.View())
	}
	return out
}

func (ch *chat) ShortHelp() []key.Binding {
	k := ch.c.keys
	return []key.Binding{k.Send,
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "leave the prompt")),
		key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "stop the answer / clear"))}
}
