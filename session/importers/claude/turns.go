package claude

import (
	"cmp"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
)

// assistant adds a line's blocks to the turn of its message.id, starting a
// new turn (and finishing the previous one) when the ID changes.
func (p *parser) assistant(key string, l *line) bool {
	blocks := l.Message.Content
	p.st.Command = nil
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
			pt.SourcePath = p.openCall(key, t.m, b, l.Cwd)
			p.callFor(key, b.ID)
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
			p.sink.Revise(t.m.SessionID, t.m.Seq, func(m *session.Message) {
				m.Parts = append(m.Parts, added...)
				m.SyncSourcePaths()
			})
		}
		return
	}
	t.m.SyncSourcePaths()
	p.sink.Put(t.m)
}

// user handles a user line: a prompt (string content or text blocks) and/or
// tool results, in the order of its blocks.
func (p *parser) user(key string, l *line) bool {
	blocks := l.Message.Content
	// A slash command's text is the line after the one that ran it.
	cmd := p.st.Command
	p.st.Command = nil
	if !l.IsMeta {
		p.st.Command = ranCommand(blocks, cmp.Or(l.Cwd, p.st.Cwd))
	} else if cmd != nil && !l.IsCompactSummary {
		return p.commandText(key, l, cmd)
	}
	results := 0
	for _, b := range blocks {
		if b.Type == "tool_result" {
			results++
		}
	}
	var prompt []session.Part
	var whole []string
	unknown := ""
	flushPrompt := func() {
		if len(prompt) == 0 {
			return
		}
		p.finishTurn(key)
		p.noteTitle(key, l, prompt)
		m := &session.Message{Role: session.RoleUser, Parts: prompt, CreatedAt: parseTime(l.Timestamp)}
		m.SyncSourcePaths(whole...)
		m.Meta.UnknownSource = unknown
		p.sink.Add(key, m)
		prompt, whole, unknown = nil, nil, ""
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			parts, forms, why := p.replayed(b.Text, l.Cwd)
			prompt = append(prompt, parts...)
			whole = append(whole, forms...)
			if unknown == "" {
				unknown = why
			}
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

// Claude Code replays files into the conversation as user text: an
// @-mention, or the files restored after a compaction. Older versions write
// the call and its result as two texts, newer ones as one.
var (
	replayCall   = regexp.MustCompile(`Called the (\w+) tool with the following input: `)
	replayResult = regexp.MustCompile(`Result of calling the (\w+) tool:[ \t]*\n?`)
)

// replayed cuts a user text that replays a Read into the text around the
// file's content and the content, attributed to the file. forms are the
// file's other forms, to which the message is attributed as a whole; why
// says why a replayed result's file cannot be told.
func (p *parser) replayed(text, cwd string) (parts []session.Part, forms []string, why string) {
	plain := []session.Part{{Kind: session.PartText, Text: text}}
	if parts, forms, why, ok := p.skill(text, cwd); ok {
		return parts, forms, why
	}
	if call := replayCall.FindStringSubmatchIndex(text); call != nil {
		var in struct {
			FilePath string `json:"file_path"`
		}
		dec := json.NewDecoder(strings.NewReader(text[call[1]:]))
		_ = dec.Decode(&in)
		p.st.Replay = nil
		if tool := text[call[2]:call[3]]; tool == "Read" && in.FilePath != "" {
			p.st.Replay = &replay{Path: in.FilePath, Cwd: cwd}
		} else {
			p.st.Replay = &replay{Cwd: "tool:" + tool}
		}
	}
	res := replayResult.FindStringSubmatchIndex(text)
	if res == nil {
		return plain, nil, ""
	}
	rp := p.st.Replay
	p.st.Replay = nil
	tool := text[res[2]:res[3]]
	if rp == nil || rp.Path == "" || tool != "Read" {
		return plain, nil, "a replayed " + tool + " result whose file is not recorded"
	}
	all := p.paths.Forms(rp.Path, rp.Cwd)
	if len(all) == 0 {
		return plain, nil, "a replayed Read result whose file cannot be resolved"
	}
	head, body, tail := text[:res[1]], text[res[1]:], ""
	if i := strings.LastIndex(body, "</system-reminder>"); i >= 0 {
		body, tail = body[:i], body[i:]
	}
	for _, t := range []session.Part{{Text: strings.TrimSuffix(head, "\n")}, {Text: strings.TrimSuffix(body, "\n"), SourcePath: all[0]}, {Text: tail}} {
		if t.Text != "" || t.SourcePath != "" {
			t.Kind = session.PartText
			parts = append(parts, t)
		}
	}
	return parts, all[1:], ""
}

// skillHeader begins what Claude Code adds to the conversation when a skill
// is used (the Skill tool, or the user's /NAME): a user text, after the
// call's "Launching skill: NAME", of the skill's folder and then its
// SKILL.md, the front matter left out.
const skillHeader = "Base directory for this skill: "

// skill cuts such a text into the header and the body that is the
// skill's SKILL.md (from the first line after the header's blank line),
// attributed to it (forms: the file's other forms); a folder that cannot
// be resolved makes it of unknown source (why). ok is false for any other
// text.
func (p *parser) skill(text, cwd string) (parts []session.Part, forms []string, why string, ok bool) {
	rest, ok := strings.CutPrefix(text, skillHeader)
	if !ok {
		return nil, nil, "", false
	}
	dir, body, _ := strings.Cut(rest, "\n")
	if dir = strings.TrimSpace(dir); dir == "" {
		return nil, nil, "", false
	}
	body = strings.TrimLeft(body, "\n")
	all := p.paths.Forms(dir+"/SKILL.md", cwd)
	if len(all) == 0 {
		return []session.Part{{Kind: session.PartText, Text: text}}, nil, "a skill's instructions whose file cannot be resolved", true
	}
	head := session.Part{Kind: session.PartText, Text: text[:len(text)-len(body)]}
	return []session.Part{head, {Kind: session.PartText, Text: body, SourcePath: all[0]}}, all[1:], "", true
}

// noteTitle keeps each session's first real prompt for its title.
func (p *parser) noteTitle(key string, l *line, prompt []session.Part) {
	if p.st.Prompts[key] != "" || l.IsMeta {
		return
	}
	text := strings.TrimSpace(prompt[0].Text)
	if strings.HasPrefix(text, "<") || strings.HasPrefix(text, "Caveat:") || strings.HasPrefix(text, skillHeader) || text == "" {
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
	p.finishEarly()
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

// title is a session's title: a subagent's first prompt, else the title the
// user gave, the one Claude Code gave (ai-title), its summary or the first
// prompt.
func (p *parser) title(key string) string {
	if key != "" || p.agentFile {
		if t := p.st.Prompts[key]; t != "" {
			return "subagent: " + t
		}
		return ""
	}
	for _, t := range []string{p.st.Custom, p.st.AITitle, p.st.Summary, p.st.Prompts[""]} {
		if t != "" {
			return t
		}
	}
	return ""
}
