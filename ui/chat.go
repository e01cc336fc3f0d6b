package ui

import (
	"context"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
)

// chatEvent is what the sending goroutine reports: a piece of the answer,
// or the end of the turn.
type chatEvent struct {
	delta string
	done  bool
	err   error
}

// chatDeltaMsg and chatDoneMsg carry the session they belong to: the user
// may have opened another session while the answer streams in.
type chatDeltaMsg struct {
	sid    string
	text   string
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
	reply   strings.Builder
	err     string
	cancel  context.CancelFunc
}

func newChat(c *common) *chat {
	in := textinput.New()
	in.Prompt = "› "
	in.Placeholder = "ask the active model; enter sends, esc leaves"
	in.CharLimit = 8000
	in.Cursor.SetMode(cursor.CursorStatic)
	return &chat{c: c, input: in}
}

// start runs one turn in a goroutine; its events come back one by one
// through waitChat.
func (ch *chat) start(s Sender, sid, model, prompt string) tea.Cmd {
	ctx, cancel := context.WithCancel(context.Background())
	ch.sending, ch.sid, ch.model, ch.prompt, ch.err, ch.cancel = true, sid, model, prompt, "", cancel
	ch.reply.Reset()
	events := make(chan chatEvent, 256)
	go func() {
		defer cancel()
		err := s.Send(ctx, sid, model, prompt, func(t string) { events <- chatEvent{delta: t} })
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
		return chatDeltaMsg{sid: sid, text: ev.delta, events: events}
	}
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
	return []key.Binding{k.Send, key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "leave (cancels a running turn)"))}
}
