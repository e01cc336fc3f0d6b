package claude

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
)

// openCall remembers a tool call until its result arrives.
func (p *parser) openCall(key string, m *session.Message, b block, cwd string) {
	if b.ID == "" {
		return
	}
	c := &call{Name: b.Name, Cwd: cwd, SessionID: m.SessionID, Seq: m.Seq}
	_ = json.Unmarshal(b.Input, &c.In) // a malformed input only costs attribution
	if p.st.Pending == nil {
		p.st.Pending = map[string]*call{}
	}
	p.st.Pending[b.ID] = c
}

// result writes a tool_result block as a tool message paired with its call.
// The line's toolUseResult describes its result only when it has one
// (single is false for a line carrying several results).
func (p *parser) result(key string, l *line, b *block, single bool) {
	c := p.st.Pending[b.ToolUseID]
	if c != nil {
		delete(p.st.Pending, b.ToolUseID)
		if c.Noted {
			// An earlier import marked the call as without result; it has one now.
			id := b.ToolUseID
			p.sink.Revise(c.SessionID, c.Seq, func(m *session.Message) { m.Meta.Note = importers.DropUnpaired(m.Meta.Note, id) })
		}
	} else {
		c = &call{}
	}
	text := resultText(b.Content)
	m := &session.Message{
		Role: session.RoleTool, Tool: strings.ToLower(c.Name), ToolCallID: b.ToolUseID,
		IsError: b.IsError, Model: p.st.Models[key], CreatedAt: parseTime(l.Timestamp),
	}
	if c.Name == "" {
		m.Meta.Note = "imported tool result whose call is not in the transcript"
	}
	cwd := c.Cwd
	if cwd == "" {
		cwd = l.Cwd
	}
	if cwd == "" {
		cwd = p.st.Cwd
	}
	if b.IsError {
		// An error names what failed; it carries no file content.
		m.Parts = []session.Part{{Kind: session.PartToolResult, Text: text}}
	} else {
		tur := l.ToolUseResult
		if tur == nil || !single {
			tur = &toolUseResult{}
		}
		p.attribute(m, c, tur, text, cwd)
	}
	p.sink.Add(key, m)
}

// attribute fills m's parts and sourcePaths from what the call's tool does.
func (p *parser) attribute(m *session.Message, c *call, tur *toolUseResult, text, cwd string) {
	whole := func(paths ...string) {
		m.Parts = []session.Part{{Kind: session.PartToolResult, Text: text}}
		m.Meta.SourcePaths = dedupe(paths)
	}
	switch c.Name {
	case "Read", "NotebookRead":
		path := c.In.FilePath
		if path == "" {
			path = c.In.NotebookPath
		}
		if tur.File != nil && tur.File.FilePath != "" {
			path = tur.File.FilePath
		}
		path = p.paths.Canonical(path, cwd)
		if path == "" {
			whole() // a read of an unnamed file: unknown source
			return
		}
		m.Parts = readParts(text, path)
		m.SyncSourcePaths()
	case "Edit", "MultiEdit", "Write", "NotebookEdit":
		// Their results quote the edited file (a cat -n snippet).
		path := c.In.FilePath
		if path == "" {
			path = c.In.NotebookPath
		}
		if tur.FilePath != "" {
			path = tur.FilePath
		}
		whole(p.paths.Canonical(path, cwd))
	case "Grep":
		mode := c.In.OutputMode
		if tur.Mode != "" {
			mode = tur.Mode
		}
		if mode == "content" {
			m.Parts = p.grepContent(text, c.In.Path, cwd)
			m.SyncSourcePaths()
			return
		}
		// Which files match a pattern says something about their content:
		// the listing is attributed to all of them, as a whole.
		whole(p.grepListed(text, tur.Filenames, cwd)...)
	default:
		// Glob lists names; Bash, WebFetch, Task and tools we do not know
		// return text of unknown source.
		whole()
	}
}

func dedupe(paths []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// markOpenCalls notes, on the assistant message that made it, each call that
// has no result (yet): the next import of a grown file removes the note if
// the result turns up.
func (p *parser) markOpenCalls() {
	ids := make([]string, 0, len(p.st.Pending))
	for id := range p.st.Pending {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		c := p.st.Pending[id]
		if c.Noted || c.SessionID == "" {
			continue
		}
		c.Noted = true
		note := importers.UnpairedNote(id, c.Name)
		p.sink.Revise(c.SessionID, c.Seq, func(m *session.Message) { m.Meta.Note = importers.AddNote(m.Meta.Note, note) })
	}
}
