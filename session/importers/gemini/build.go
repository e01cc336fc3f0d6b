package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
)

// turn is an API turn of a "/chat save" checkpoint.
type turn struct {
	Role  string    `json:"role"`
	Parts []apiPart `json:"parts"`
}

// apiPart is a Gemini API part: text, a function call or response, inline
// data. Message records' content and tool results are lists of them too.
type apiPart struct {
	Text         *string `json:"text"`
	Thought      bool    `json:"thought"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
	InlineData *struct {
		MimeType string `json:"mimeType"`
	} `json:"inlineData"`
}

// checkpoint reads a bare array of API turns.
func (c *conversation) checkpoint(data []byte, rd *importers.Read) error {
	var raws []json.RawMessage
	if !decode(data, &raws) {
		return errors.New("not a Gemini CLI session (unreadable JSON)")
	}
	for i, raw := range raws {
		rd.Records++
		var t turn
		if !decode(raw, &t) || (t.Role != "user" && t.Role != "model") {
			if i == 0 {
				return errors.New("not a Gemini CLI checkpoint (its first item is not a user or model turn): is this the right file?")
			}
			rd.Skipped++
			continue
		}
		c.turns = append(c.turns, t)
	}
	if c.turns == nil {
		c.turns = []turn{}
	}
	return nil
}

// builder turns a conversation into scrim messages.
type builder struct {
	paths *importers.Paths
	file  string
	// workspace is the folders the session context names: relative paths
	// are taken against the first.
	workspace []string
	title     string
	msgs      []*session.Message
	// copies are what its commands wrote into files from other files.
	copies importers.Copies
}

func (b *builder) build(c *conversation, rd *importers.Read) importers.Conversation {
	b.workspace = c.header.Directories
	if c.turns != nil {
		b.fromTurns(c.turns)
	} else {
		for i := range c.msgs {
			if !b.record(&c.msgs[i]) {
				rd.Skipped++
			}
		}
	}
	h := session.Header{Title: b.title, Origin: "imported from gemini: " + b.file}
	if c.header.Summary != "" {
		h.Title = importers.Title(c.header.Summary)
	}
	if len(b.workspace) > 0 {
		h.WorkDir = b.workspace[0]
	}
	if c.header.Kind == "subagent" {
		h.Title = "subagent: " + h.Title
		// Gemini CLI keeps a subagent's conversation in chats/<its
		// parent's session ID>/<its own>.jsonl: session.ParentOrigins
		// links it to chats/session-<time>-<that ID's first 8>.jsonl.
		if dir := filepath.Dir(b.file); filepath.Base(filepath.Dir(dir)) == "chats" {
			h.Origin += " (subagent of session " + filepath.Base(dir) + ")"
		}
	}
	return importers.Conversation{Header: h, Sub: c.header.Kind == "subagent", Messages: b.msgs}
}

// record adds one message record's messages; false when it is of a kind
// not known.
func (b *builder) record(r *record) bool {
	parts := contentParts(r.Content)
	switch r.Type {
	case "user":
		b.user(parts, r.Timestamp)
	case "gemini":
		model := importers.ModelID("google", r.Model)
		m := &session.Message{Role: session.RoleAssistant, Model: model, Parts: textParts(parts)}
		b.add(m, r.Timestamp)
		for _, tc := range r.ToolCalls {
			id := tc.ID
			if id == "" {
				id = fmt.Sprintf("%s-call-%d", r.ID, len(m.Parts))
			}
			m.Parts = append(m.Parts, session.Part{Kind: session.PartToolCall, CallID: id, Name: tc.Name, Input: input(tc.Args), SourcePath: b.writes(tc.Name, tc.Args)})
			if len(tc.Result) == 0 || string(tc.Result) == "null" {
				m.Meta.Note = importers.AddNote(m.Meta.Note, importers.UnpairedNote(id, tc.Name))
				continue
			}
			ts := tc.Timestamp
			if ts == "" {
				ts = r.Timestamp
			}
			out := resultPieces(tc.Result)
			b.result(call{id: id, name: tc.Name, args: tc.Args, failed: tc.Status == "error"}, out, model, ts)
		}
		m.SyncSourcePaths()
	case "info", "error", "warning":
		b.add(&session.Message{Role: session.RoleEvent, Parts: textParts(parts), Meta: session.Meta{Note: "gemini " + r.Type}}, r.Timestamp)
	default:
		return false
	}
	return true
}

// user adds a user message, reading the workspace from the session
// context Gemini CLI injects.
func (b *builder) user(parts []apiPart, ts string) {
	m := &session.Message{Role: session.RoleUser, Parts: textParts(parts)}
	text := m.Text()
	if dirs := contextDirs(text); dirs != nil {
		b.workspace = dirs
	} else if words, _, _ := strings.Cut(text, refStart); b.title == "" && strings.TrimSpace(words) != "" {
		b.title = importers.Title(words) // not the files it mentions
	}
	b.references(m)
	b.add(m, ts)
}

// fromTurns adds a checkpoint's turns. Its function calls have no IDs:
// each is paired, by position and name, with a response of the turn after
// it, whose ID it takes.
func (b *builder) fromTurns(turns []turn) {
	for i, t := range turns {
		if t.Role == "model" {
			m := &session.Message{Role: session.RoleAssistant, Parts: textParts(t.Parts)}
			var next []apiPart
			if i+1 < len(turns) && turns[i+1].Role == "user" && hasResponse(turns[i+1].Parts) {
				next = turns[i+1].Parts
			}
			used := map[int]bool{}
			for n, p := range t.Parts {
				if p.FunctionCall == nil {
					continue
				}
				id := p.FunctionCall.ID
				if k := responseFor(next, p.FunctionCall.Name, used); k >= 0 {
					used[k] = true
					if id == "" {
						id = next[k].FunctionResponse.ID
					}
				}
				if id == "" {
					id = fmt.Sprintf("turn%d-call%d", i, n)
				}
				p.FunctionCall.ID = id
				m.Parts = append(m.Parts, session.Part{Kind: session.PartToolCall, CallID: id, Name: p.FunctionCall.Name, Input: input(p.FunctionCall.Args),
					SourcePath: b.writes(p.FunctionCall.Name, p.FunctionCall.Args)})
			}
			m.SyncSourcePaths()
			b.add(m, "")
			b.turnResults(t, next, used)
			continue
		}
		if i > 0 && turns[i-1].Role == "model" && hasResponse(t.Parts) {
			continue // its responses were added after the calls
		}
		b.userTurn(t.Parts)
	}
}

// turnResults adds the responses of next to the calls of model turn t.
func (b *builder) turnResults(t turn, next []apiPart, used map[int]bool) {
	byResponse := map[int]call{}
	k := 0
	for _, p := range t.Parts {
		if p.FunctionCall == nil {
			continue
		}
		for ; k < len(next); k++ {
			if fr := next[k].FunctionResponse; fr != nil && fr.Name == p.FunctionCall.Name {
				byResponse[k] = call{id: p.FunctionCall.ID, name: p.FunctionCall.Name, args: p.FunctionCall.Args}
				k++
				break
			}
		}
	}
	var before []apiPart
	for j := 0; j < len(next); j++ {
		fr := next[j].FunctionResponse
		if fr == nil {
			before = append(before, next[j]) // text before the first response
			continue
		}
		end := j + 1
		for end < len(next) && next[end].FunctionResponse == nil {
			end++
		}
		out := resultPieces(mustJSON(next[j:end]))
		c, ok := byResponse[j]
		if !ok {
			c = call{id: fr.ID, name: fr.Name}
			b.orphan(c, out)
		} else {
			b.result(c, out, "", "")
		}
		j = end - 1
	}
	if len(before) > 0 {
		b.user(before, "")
	}
}

func (b *builder) userTurn(parts []apiPart) {
	if hasResponse(parts) {
		for j := 0; j < len(parts); j++ {
			if fr := parts[j].FunctionResponse; fr != nil {
				end := j + 1
				for end < len(parts) && parts[end].FunctionResponse == nil {
					end++
				}
				b.orphan(call{id: fr.ID, name: fr.Name}, resultPieces(mustJSON(parts[j:end])))
				j = end - 1
			}
		}
		return
	}
	b.user(parts, "")
}

func responseFor(parts []apiPart, name string, used map[int]bool) int {
	for k, p := range parts {
		if p.FunctionResponse != nil && p.FunctionResponse.Name == name && !used[k] {
			return k
		}
	}
	return -1
}

func hasResponse(parts []apiPart) bool {
	for _, p := range parts {
		if p.FunctionResponse != nil {
			return true
		}
	}
	return false
}

// orphan adds a result whose call is not in the session.
func (b *builder) orphan(c call, out []string) {
	m := &session.Message{Role: session.RoleTool, ToolCallID: c.id, Tool: toolName(c.name),
		Parts: []session.Part{{Kind: session.PartToolResult, Text: strings.Join(out, "\n")}}}
	m.Meta.Note = "imported tool result whose call is not in the session"
	m.Meta.UnknownSource = "the tool call this result answers is not in the session"
	b.add(m, "")
}

func mustJSON(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return raw
}

// input is a call's arguments as a part's JSON input (nil when they are not
// JSON).
func input(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || !json.Valid(raw) {
		return nil
	}
	return raw
}

// contentParts reads a record's content: a string, one part or a list.
func contentParts(raw json.RawMessage) []apiPart {
	if len(raw) == 0 {
		return nil
	}
	if s, ok := importers.JSONString(raw); ok {
		return []apiPart{{Text: &s}}
	}
	var parts []apiPart
	if raw[0] == '[' {
		if decode(raw, &parts) {
			return parts
		}
		return nil
	}
	var p apiPart
	if decode(raw, &p) {
		return []apiPart{p}
	}
	return nil
}

// textParts are the visible text of parts: thoughts are left out (they are
// the model's own and signed for it), images named.
func textParts(parts []apiPart) []session.Part {
	var out []session.Part
	for _, p := range parts {
		switch {
		case p.Thought:
		case p.Text != nil && *p.Text != "":
			out = append(out, session.Part{Kind: session.PartText, Text: *p.Text})
		case p.InlineData != nil:
			out = append(out, session.Part{Kind: session.PartText, Text: "[image: " + p.InlineData.MimeType + "]"})
		}
	}
	return out
}

// resultPieces are a tool result as the model saw it, piece by piece: the
// function response's output (or error), then each part after it
// (read_many_files puts each file in a text part of its own).
func resultPieces(raw json.RawMessage) []string {
	if s, ok := importers.JSONString(raw); ok {
		return []string{s}
	}
	var out []string
	for _, p := range contentParts(raw) {
		switch {
		case p.FunctionResponse != nil:
			out = append(out, responseText(p.FunctionResponse.Response))
		case p.Thought:
		case p.Text != nil:
			out = append(out, *p.Text)
		case p.InlineData != nil:
			out = append(out, "[image: "+p.InlineData.MimeType+"]")
		}
	}
	return out
}

// responseText is a function response's {output} or {error}, else its JSON.
func responseText(raw json.RawMessage) string {
	var r struct {
		Output *string `json:"output"`
		Error  *string `json:"error"`
	}
	if decode(raw, &r) {
		switch {
		case r.Output != nil:
			return *r.Output
		case r.Error != nil:
			return *r.Error
		}
	}
	return string(raw)
}

var (
	oneDir   = regexp.MustCompile(`(?m)^I'm currently working in the directory: (.+?)\s*$`)
	manyDirs = regexp.MustCompile(`(?m)^I'm currently working in the following directories:\s*$`)
	dirItem  = regexp.MustCompile(`^\s+- (.+?)\s*$`)
)

// contextDirs reads the workspace folders from the session context Gemini
// CLI puts before the first prompt; nil when text is not one.
func contextDirs(text string) []string {
	if !strings.Contains(text, "<session_context>") && !strings.Contains(text, "This is the Gemini CLI.") {
		return nil
	}
	if m := oneDir.FindStringSubmatch(text); m != nil {
		return []string{m[1]}
	}
	if loc := manyDirs.FindStringIndex(text); loc != nil {
		var dirs []string
		for _, l := range strings.Split(text[loc[1]:], "\n")[1:] {
			m := dirItem.FindStringSubmatch(l)
			if m == nil {
				break
			}
			dirs = append(dirs, m[1])
		}
		return dirs
	}
	return []string{}
}
