package claude

import (
	"cmp"
	"encoding/json"
	"regexp"
	"sort"
	"strings"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/shellread"
)

// openCall remembers a tool call until its result arrives. It returns the
// file the call writes, for a tool (or a command) that writes one: what its
// input holds of that file (what an edit replaces, what it writes) is the
// file's content.
func (p *parser) openCall(key string, m *session.Message, b block, cwd string) (writes string) {
	c := &call{Name: b.Name, Cwd: cwd, SessionID: m.SessionID, Seq: m.Seq}
	_ = json.Unmarshal(b.Input, &c.In) // a malformed input only costs attribution
	switch c.Name {
	case "Edit", "MultiEdit", "Write", "NotebookEdit":
		writes = p.paths.Canonical(cmp.Or(c.In.FilePath, c.In.NotebookPath), cwd)
	case "Bash":
		writes = p.paths.WrittenBy(shellread.Command{Line: c.In.Command, Dir: cwd})
	}
	if b.ID == "" {
		return writes
	}
	if p.st.Pending == nil {
		p.st.Pending = map[string]*call{}
	}
	p.st.Pending[b.ID] = c
	return writes
}

// result writes a tool_result block as a tool message paired with its call.
// The line's toolUseResult describes its result only when it has one
// (single is false for a line carrying several results). A result whose
// call has not been seen yet (Claude Code has written a result before its
// call) keeps its place and waits for the call.
func (p *parser) result(key string, l *line, b *block, single bool) {
	c := p.st.Pending[b.ToolUseID]
	if c != nil {
		delete(p.st.Pending, b.ToolUseID)
		if c.Noted {
			// An earlier import marked the call as without result; it has one now.
			id := b.ToolUseID
			p.sink.Revise(c.SessionID, c.Seq, func(m *session.Message) { m.Meta.Note = importers.DropUnpaired(m.Meta.Note, id) })
		}
	}
	m := &session.Message{
		Role: session.RoleTool, ToolCallID: b.ToolUseID,
		IsError: b.IsError, Model: p.st.Models[key], CreatedAt: parseTime(l.Timestamp),
	}
	tur := l.ToolUseResult
	if tur == nil || !single {
		tur = &toolUseResult{}
	}
	r := &heldResult{m: m, text: resultText(b.Content), tur: tur, cwd: l.Cwd}
	if c == nil && b.ToolUseID != "" {
		// Keep its place; the call may come later in the file.
		m.SessionID, m.Seq = p.sink.Reserve(key)
		if p.early == nil {
			p.early = map[string]*heldResult{}
		}
		p.early[b.ToolUseID] = r
		return
	}
	p.finishResult(key, r, c)
	p.sink.Add(key, m)
}

// heldResult is a tool result and what attributing it needs.
type heldResult struct {
	m    *session.Message
	text string
	tur  *toolUseResult
	cwd  string
}

// finishResult attributes a result to what its call c read (c nil: the
// call is not in the transcript).
func (p *parser) finishResult(key string, r *heldResult, c *call) {
	m := r.m
	if c == nil {
		c = &call{}
		m.Meta.Note = "imported tool result whose call is not in the transcript"
		m.Meta.UnknownSource = "the tool call this result answers is not in the transcript"
	}
	m.Tool = strings.ToLower(c.Name)
	cwd := c.Cwd
	if cwd == "" {
		cwd = r.cwd
	}
	if cwd == "" {
		cwd = p.st.Cwd
	}
	p.attribute(m, c, r.tur, r.text, cwd)
}

// callFor is called when a tool_use block is seen: a result that came
// before it is attributed and written now, in the place it kept.
func (p *parser) callFor(key, id string) {
	r := p.early[id]
	if r == nil {
		return
	}
	delete(p.early, id)
	c := p.st.Pending[id]
	delete(p.st.Pending, id)
	p.finishResult(key, r, c)
	p.sink.Put(r.m)
}

// finishEarly writes the results whose call never came.
func (p *parser) finishEarly() {
	ids := make([]string, 0, len(p.early))
	for id := range p.early {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r := p.early[id]
		p.finishResult("", r, nil)
		p.sink.Put(r.m)
	}
	p.early = nil
}

// fileTools are the tools whose results are a file's content, or about one
// file (an error names what failed: no content).
var fileTools = map[string]bool{"Read": true, "NotebookRead": true, "Edit": true, "MultiEdit": true, "Write": true,
	"NotebookEdit": true, "Grep": true, "Glob": true, "LS": true}

// attribute fills m's parts and sourcePaths from what the call's tool does.
func (p *parser) attribute(m *session.Message, c *call, tur *toolUseResult, text, cwd string) {
	whole := func(paths ...string) {
		m.Parts = []session.Part{{Kind: session.PartToolResult, Text: text}}
		m.Meta.SourcePaths = dedupe(paths)
	}
	if m.IsError && c.Name != "Bash" {
		// An error names what failed; it carries no file content. A failed
		// command's output still does (Bash results are read below).
		m.Parts = []session.Part{{Kind: session.PartToolResult, Text: text}}
		if fileTools[c.Name] {
			m.Meta.NoFiles = true
		}
		return
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
		forms := p.paths.Forms(path, cwd)
		if len(forms) == 0 {
			whole() // a read of an unnamed file: unknown source
			m.Meta.UnknownSource = "the Read call names no file"
			return
		}
		m.Parts = readParts(text, forms[0])
		m.SyncSourcePaths(forms[1:]...)
		p.st.Copies.Attach(m)
	case "Edit", "MultiEdit", "Write", "NotebookEdit":
		// Their results quote the edited file (a cat -n snippet).
		path := c.In.FilePath
		if path == "" {
			path = c.In.NotebookPath
		}
		if tur.FilePath != "" {
			path = tur.FilePath
		}
		whole(p.paths.Forms(path, cwd)...)
		if m.Meta.SourcePaths == nil {
			m.Meta.UnknownSource = "the edit names no file"
		}
	case "Grep":
		mode := c.In.OutputMode
		if tur.Mode != "" {
			mode = tur.Mode
		}
		if mode == "content" {
			p.grepContent(m, c, text, cwd)
		} else {
			// Which files match a pattern says something about their
			// content: the listing is attributed to all of them, as a whole.
			whole(p.grepListed(text, tur.Filenames, cwd)...)
			if m.Meta.SourcePaths == nil {
				m.Meta.NoFiles = true // "No files found"
			}
		}
		p.st.Copies.Attach(m)
	case "Bash":
		if id := backgroundID(text, tur); id != "" {
			if p.st.Background == nil {
				p.st.Background = map[string]*call{}
			}
			p.st.Background[id] = &call{Name: c.Name, In: c.In, Cwd: cwd}
			if out := outputFileRE.FindStringSubmatch(text); out != nil {
				// Claude Code 2 writes the command's output to a file, which
				// the model may Read or cat later.
				p.st.Copies.Output(p.paths.Canonical(out[1], cwd), p.paths.Reads(shellread.Command{Line: c.In.Command, Dir: cwd}))
			}
			if backgroundNotice.MatchString(strings.TrimSpace(text)) {
				// Claude Code's notice that it started the command, and no
				// more: none of its output, which comes later.
				m.Parts = []session.Part{{Kind: session.PartToolResult, Text: text}}
				m.Meta.NoFiles = true
				return
			}
		}
		p.paths.Shell(m, shellread.Command{Line: c.In.Command, Dir: cwd}, "", text, &p.st.Copies)
	case "BashOutput", "TaskOutput":
		id := c.In.BashID
		if id == "" {
			id = c.In.TaskID
		}
		bg := p.st.Background[id]
		if bg == nil {
			whole()
			m.Meta.UnknownSource = "the output of a background command whose start is not in the transcript"
			return
		}
		dir := bg.Cwd
		if dir == "" {
			dir = cwd
		}
		p.paths.Shell(m, shellread.Command{Line: bg.In.Command, Dir: dir}, "", text, &p.st.Copies)
	case "Glob", "LS", "KillShell", "KillBash", "TaskStop", "TodoWrite", "TodoRead", "ExitPlanMode", "EnterPlanMode":
		whole() // names, or Claude Code's own bookkeeping
		m.Meta.NoFiles = true
	case "Skill":
		whole()
		if skillLaunched.MatchString(text) {
			m.Meta.NoFiles = true // the skill's text follows as a user text (parser.skill)
		} else {
			m.Meta.UnknownSource = unknownTool(c.Name)
		}
	default:
		whole()
		m.Meta.UnknownSource = unknownTool(c.Name)
	}
}

// unknownTool says why a tool's result is of unknown source.
func unknownTool(name string) string {
	switch {
	case name == "WebFetch":
		return "content fetched from the web"
	case name == "WebSearch":
		return "web search results"
	case name == "Task" || name == "Agent":
		return "a subagent's answer, which may repeat what it read"
	case strings.HasPrefix(name, "mcp__"):
		return "the result of an MCP tool (" + name + ")"
	case name == "":
		return "the tool call this result answers is not in the transcript"
	}
	return "the tool " + name + " is not known to scrim"
}

// skillLaunched is the whole result of a Skill call: the skill's name.
var skillLaunched = regexp.MustCompile(`^Launching skill: \S+\s*$`)

var backgroundRE = regexp.MustCompile(`running in background with ID: ?(\S+?)[.\s]`)

// outputFileRE finds the file Claude Code 2 writes a background command's
// output to, in the Bash result that says it started it.
var outputFileRE = regexp.MustCompile(`Output is being written to: (\S+)`)

// backgroundNotice is the whole result of a Bash call that started its
// command in the background: the notice, where to find the output, and
// nothing of it.
var backgroundNotice = regexp.MustCompile(`^Command running in background with ID: ?\S+?(\. Output is being written to: \S+?)?\.?$`)

// backgroundID is the ID of a command Bash started in the background.
func backgroundID(text string, tur *toolUseResult) string {
	if tur.Background != "" {
		return tur.Background
	}
	if m := backgroundRE.FindStringSubmatch(text + " "); m != nil {
		return m[1]
	}
	return ""
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
