package claude

import (
	"strings"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
)

// assistant adds a line's blocks to the turn of its message.id, starting a
// new turn (and finishing the previous one) when the ID changes.
func (p *parser) assistant(key string, l *line) bool {
	blocks := l.Message.Content
	if m := importers.ModelID("anthropic", l.Message.Model); m != "" {
		if p.st.Models == nil {
			p.st.Models = map[string]string{}
		}
		p.st.Models[key] = m
	}
	t := p.turns[key]
	if t == nil || l.Message.ID == "" || t.msgID != l.Message.ID {
		p.finishTurn(key)
		t = p.startTurn(key, l)
		if t == nil {
			return true // the store failed; the driver reports it
		}
	}
	if t.m.Model == "" {
		t.m.Model = importers.ModelID("anthropic", l.Message.Model)
	}
	for _, b := range blocks {
		var pt session.Part
		switch b.Type {
		case "text":
			pt = session.Part{Kind: session.PartText, Text: b.Text}
		case "tool_use":
			pt = session.Part{Kind: session.PartToolCall, CallID: b.ID, Name: b.Name, Input: b.Input}
			p.openCall(key, t.m, b, l.Cwd)
		default:
			// thinking blocks are signed by and for the model that wrote
			// them; no other model can be sent them, so they are not kept.
			continue
		}
		if t.revise {
			t.added = append(t.added, pt)
		} else {
			t.m.Parts = append(t.m.Parts, pt)
		}
	}
	return true
}

// startTurn reserves the turn's place, or picks up the turn that an earlier
// import of this file stored last when the line continues it.
func (p *parser) startTurn(key string, l *line) *turn {
	if last, ok := p.st.Last[key]; ok && l.Message.ID != "" && last.MsgID == l.Message.ID && p.sink.Known(key) {
		t := &turn{msgID: last.MsgID, revise: true, m: &session.Message{SessionID: last.SessionID, Seq: last.Seq}}
		p.turns[key] = t
		return t
	}
	id, seq := p.sink.Reserve(key)
	if id == "" {
		return nil
	}
	t := &turn{msgID: l.Message.ID, m: &session.Message{
		SessionID: id, Seq: seq, Role: session.RoleAssistant, CreatedAt: parseTime(l.Timestamp),
	}}
	p.turns[key] = t
	return t
}

// finishTurn writes the turn of session key, if any.
func (p *parser) finishTurn(key string) {
	t := p.turns[key]
	if t == nil {
		return
	}
	delete(p.turns, key)
	if p.st.Last == nil {
		p.st.Last = map[string]lastTurn{}
	}
	p.st.Last[key] = lastTurn{MsgID: t.msgID, SessionID: t.m.SessionID, Seq: t.m.Seq}
	if t.revise {
		if len(t.added) > 0 {
			added := t.added
			p.sink.Revise(t.m.SessionID, t.m.Seq, func(m *session.Message) { m.Parts = append(m.Parts, added...) })
		}
		return
	}
	p.sink.Put(t.m)
}

// user handles a user line: a prompt (string content or text blocks) and/or
// tool results, in the order of its blocks.
func (p *parser) user(key string, l *line) bool {
	blocks := l.Message.Content
	results := 0
	for _, b := range blocks {
		if b.Type == "tool_result" {
			results++
		}
	}
	var prompt []session.Part
	flushPrompt := func() {
		if len(prompt) == 0 {
			return
		}
		p.finishTurn(key)
		p.noteTitle(key, l, prompt)
		p.sink.Add(key, &session.Message{Role: session.RoleUser, Parts: prompt, CreatedAt: parseTime(l.Timestamp)})
		prompt = nil
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			prompt = append(prompt, session.Part{Kind: session.PartText, Text: b.Text})
		case "image":
			prompt = append(prompt, session.Part{Kind: session.PartText, Text: imageNote(b)})
		case "tool_result":
			flushPrompt()
			p.result(key, l, &b, results == 1)
		}
	}
	flushPrompt()
	return true
}

// noteTitle keeps each session's first real prompt for its title.
func (p *parser) noteTitle(key string, l *line, prompt []session.Part) {
	if p.st.Prompts[key] != "" || l.IsMeta {
		return
	}
	text := strings.TrimSpace(prompt[0].Text)
	if strings.HasPrefix(text, "<") || strings.HasPrefix(text, "Caveat:") || text == "" {
		return // command echoes and caveats Claude Code inserts, not the user's words
	}
	if p.st.Prompts == nil {
		p.st.Prompts = map[string]string{}
	}
	p.st.Prompts[key] = importers.Title(text)
}

func (p *parser) Finish() {
	for key := range p.turns {
		p.finishTurn(key)
	}
	p.markOpenCalls()
	for key := range p.touched {
		title := p.title(key)
		if title == "" || title == p.st.Titled[key] {
			continue
		}
		if p.st.Titled == nil {
			p.st.Titled = map[string]string{}
		}
		p.st.Titled[key] = title
		wd := p.st.Cwd
		p.sink.EditHeader(key, func(h *session.Header) {
			h.Title = title
			if h.WorkDir == "" {
				h.WorkDir = wd
			}
		})
	}
}

// title is a session's title: a subagent's first prompt, else the session's
// own title, Claude Code's summary or the first prompt.
func (p *parser) title(key string) string {
	if key != "" || p.agentFile {
		if t := p.st.Prompts[key]; t != "" {
			return "subagent: " + t
		}
		return ""
	}
	for _, t := range []string{p.st.Custom, p.st.Summary, p.st.Prompts[""]} {
		if t != "" {
			return t
		}
	}
	return ""
}
