package codex

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
)

func (p *parser) item(it *payload, ts time.Time) bool {
	if it.Type != "reasoning" {
		defer func() { p.st.Open = nil }()
	}
	switch it.Type {
	case "message":
		return p.message(it, ts)
	case "function_call", "custom_tool_call", "local_shell_call":
		p.callItem(it, ts)
		return true
	case "function_call_output", "custom_tool_call_output":
		p.output(it, ts)
		return true
	case "reasoning", "web_search_call":
		// Reasoning is encrypted for the model that wrote it; a search call
		// has no output item of its own.
		return true
	}
	return false
}

func (p *parser) message(it *payload, ts time.Time) bool {
	var parts []session.Part
	for _, c := range it.Content {
		switch c.Type {
		case "input_text", "output_text", "text":
			parts = append(parts, session.Part{Kind: session.PartText, Text: c.Text})
		case "input_image":
			parts = append(parts, session.Part{Kind: session.PartText, Text: "[image]"})
		}
	}
	switch it.Role {
	case "assistant":
		p.finishTurn()
		p.open()
		id, seq := p.sink.Reserve("")
		p.turn = &session.Message{SessionID: id, Seq: seq, Role: session.RoleAssistant, Model: p.model(), Parts: parts, CreatedAt: ts}
	case "user":
		p.finishTurn()
		if p.st.Title == "" && len(parts) > 0 {
			if t := strings.TrimSpace(parts[0].Text); t != "" && !strings.HasPrefix(t, "<") && !strings.HasPrefix(t, "# AGENTS.md") {
				p.st.Title = importers.Title(t)
			}
		}
		p.add(&session.Message{Role: session.RoleUser, Parts: parts, CreatedAt: ts})
	case "developer", "system":
		p.finishTurn()
		p.add(&session.Message{Role: session.RoleSystem, Parts: parts, CreatedAt: ts})
	default:
		return false
	}
	return true
}

// callItem adds a call to the assistant turn (starting one if the call came
// without text).
func (p *parser) callItem(it *payload, ts time.Time) {
	if p.turn == nil && p.st.Open != nil && p.sink.Known("") {
		p.turn, p.revise = &session.Message{SessionID: p.st.Open.SessionID, Seq: p.st.Open.Seq}, true
	}
	if p.turn == nil {
		p.open()
		id, seq := p.sink.Reserve("")
		if id == "" {
			return
		}
		p.turn = &session.Message{SessionID: id, Seq: seq, Role: session.RoleAssistant, Model: p.model(), CreatedAt: ts}
	}
	name, input := it.Name, json.RawMessage(nil)
	c := &call{Name: name, SessionID: p.turn.SessionID, Seq: p.turn.Seq}
	switch it.Type {
	case "function_call":
		if json.Valid([]byte(it.Arguments)) {
			input = json.RawMessage(it.Arguments)
			var a shellArgs
			_ = json.Unmarshal(input, &a)
			c.Workdir = a.Workdir
		}
	case "custom_tool_call":
		input, _ = json.Marshal(map[string]string{"input": it.Input})
	case "local_shell_call":
		c.Name, name = "local_shell", "local_shell"
		if it.Action != nil {
			input, _ = json.Marshal(it.Action)
			c.Workdir = it.Action.WorkingDirectory
		}
	}
	id := it.CallID
	if id == "" {
		id = it.ID
	}
	if old := p.st.Calls[id]; old != nil && old.Known {
		c.Read, c.Known = old.Read, true // its event came first
	}
	p.st.Calls[id] = c
	p.turn.Parts = append(p.turn.Parts, session.Part{Kind: session.PartToolCall, CallID: id, Name: name, Input: input})
}

func (p *parser) finishTurn() {
	switch {
	case p.turn == nil:
	case p.revise:
		added := p.turn.Parts
		p.sink.Revise(p.turn.SessionID, p.turn.Seq, func(m *session.Message) { m.Parts = append(m.Parts, added...) })
	default:
		p.sink.Put(p.turn)
	}
	p.turn, p.revise = nil, false
}

// commandEvent records what a command read, per Codex's parsed_cmd, and
// releases a result that was waiting for it.
func (p *parser) commandEvent(ev *payload) {
	if ev.CallID == "" {
		return
	}
	c := p.st.Calls[ev.CallID]
	if c == nil {
		c = &call{} // the event came before its call item
		p.st.Calls[ev.CallID] = c
	}
	if len(ev.ParsedCmd) > 0 || !c.Known {
		c.Known, c.Read = true, ""
		if len(ev.ParsedCmd) == 1 && ev.ParsedCmd[0].Type == "read" {
			cwd := ev.Cwd
			if cwd == "" {
				cwd = c.Workdir
			}
			if cwd == "" {
				cwd = p.st.Cwd
			}
			c.Read = p.paths.Canonical(readPath(ev.ParsedCmd[0]), cwd)
		}
	}
	if c.Output != nil {
		if c.Read != "" {
			read := c.Read
			p.sink.Revise(c.Output.SessionID, c.Output.Seq, func(m *session.Message) { attribute(m, read) })
		}
		c.Output = nil
	}
	for i, m := range p.held {
		if m.ToolCallID == ev.CallID {
			attribute(m, c.Read)
			p.sink.Put(m)
			p.heldN -= len(m.Parts[0].Text)
			p.held = append(p.held[:i], p.held[i+1:]...)
			break
		}
	}
}

// output writes a call's output as a tool message; a shell command's output
// waits for the command's event when that has not been seen yet.
func (p *parser) output(it *payload, ts time.Time) {
	p.finishTurn()
	c := p.st.Calls[it.CallID]
	m := &session.Message{Role: session.RoleTool, ToolCallID: it.CallID, Model: p.model(), CreatedAt: ts,
		Parts: []session.Part{{Kind: session.PartToolResult, Text: outputText(it.Output)}}}
	if c == nil || c.Name == "" {
		m.Meta.Note = "imported tool result whose call is not in the transcript"
		p.add(m)
		return
	}
	m.Tool = toolName(c.Name)
	c.Done = true
	if c.Noted {
		id := it.CallID
		p.sink.Revise(c.SessionID, c.Seq, func(m *session.Message) { m.Meta.Note = importers.DropUnpaired(m.Meta.Note, id) })
	}
	if !isShell(c.Name) || c.Known {
		attribute(m, c.Read)
		p.add(m)
		return
	}
	p.open()
	m.SessionID, m.Seq = p.sink.Reserve("")
	p.held = append(p.held, m)
	p.heldN += len(m.Parts[0].Text)
	for len(p.held) > maxHeld || (p.heldN > maxHeldBytes && len(p.held) > 1) {
		p.release(p.held[0])
		p.heldN -= len(p.held[0].Parts[0].Text)
		p.held = p.held[1:]
	}
}

// release writes a held result as of unknown source; should its command's
// event still come, it attributes the stored result then.
func (p *parser) release(m *session.Message) {
	p.sink.Put(m)
	if c := p.st.Calls[m.ToolCallID]; c != nil {
		c.Output = &stored{m.SessionID, m.Seq}
	}
}

// attribute tags a command's output with the single file it read, if any.
func attribute(m *session.Message, read string) {
	if read == "" || len(m.Parts) == 0 {
		return
	}
	m.Parts[0].SourcePath = read
	m.SyncSourcePaths()
}
