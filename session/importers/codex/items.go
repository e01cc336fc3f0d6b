package codex

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/shellread"
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
	case "reasoning", "web_search_call", "compaction", "compaction_summary", "context_compaction", "ghost_snapshot",
		"image_generation_call", "tool_search_call", "tool_search_output", "additional_tools":
		// Reasoning is encrypted for the model that wrote it; a search call
		// has no output item of its own; the rest is Codex's bookkeeping.
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
		m := &session.Message{Role: session.RoleUser, CreatedAt: ts}
		var forms []string
		for _, pt := range parts {
			ps, fs, why, ok := p.agents(pt.Text)
			if !ok {
				ps, fs, why = p.skill(pt.Text)
			}
			m.Parts, forms = append(m.Parts, ps...), append(forms, fs...)
			if why != "" {
				m.Meta.UnknownSource = why
			}
		}
		m.SyncSourcePaths(forms...)
		p.add(m)
	case "developer", "system":
		p.finishTurn()
		p.add(&session.Message{Role: session.RoleSystem, Parts: parts, CreatedAt: ts})
	default:
		return false
	}
	return true
}

// callItem adds a call to the assistant turn (starting one if the call came
// without text), and notes what running it will read.
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
			p.noteCommand(c, &a)
		}
	case "custom_tool_call":
		input, _ = json.Marshal(map[string]string{"input": it.Input})
		if name == "exec" {
			c.Script, c.Unknown = scriptCommands(it.Input)
		}
	case "local_shell_call":
		c.Name, name = "local_shell", "local_shell"
		if it.Action != nil {
			input, _ = json.Marshal(it.Action)
			c.Workdir, c.Argv = it.Action.WorkingDirectory, it.Action.Command
		}
	}
	id := it.CallID
	if id == "" {
		id = it.ID
	}
	if old := p.st.Calls[id]; old != nil && old.Known {
		c.Reads, c.Known = old.Reads, true // its event came first
	}
	p.st.Calls[id] = c
	p.turn.Parts = append(p.turn.Parts, session.Part{Kind: session.PartToolCall, CallID: id, Name: name, Input: input, SourcePath: p.writes(c, it, input)})
}

// writes returns the one file call c writes, "" if none: an apply_patch
// patch of one file (the tool's, or one given through the shell as
// ["apply_patch", PATCH] or apply_patch <<'EOF'), or a shell command that
// writes one.
func (p *parser) writes(c *call, it *payload, input json.RawMessage) string {
	patch, dir := "", ""
	switch {
	case c.Name == "apply_patch" && it.Type == "function_call":
		var a struct {
			Input string `json:"input"`
		}
		_ = json.Unmarshal(input, &a)
		patch = a.Input
	case c.Name == "apply_patch":
		patch = it.Input
	case len(c.Argv) > 0 && c.Argv[0] == "apply_patch" || strings.Contains(c.Line, importers.PatchBegin) ||
		slices.ContainsFunc(c.Argv, func(a string) bool { return strings.Contains(a, importers.PatchBegin) }):
		// Through a shell: the patch is the command's lines.
		patch, dir = c.Line+"\n"+strings.Join(c.Argv, "\n"), c.Workdir
	}
	if file := importers.PatchedFile(patch); file != "" {
		return p.paths.Canonical(file, p.dir(dir))
	}
	if (c.Line == "" && c.Argv == nil) || c.Pwsh || c.Unknown != "" {
		return ""
	}
	return p.paths.WrittenBy(shellread.Command{Line: c.Line, Argv: c.Argv, Dir: p.dir(c.Workdir)})
}

// noteCommand reads the command a shell-like call runs from its arguments.
func (p *parser) noteCommand(c *call, a *shellArgs) {
	c.Workdir = a.Workdir
	switch c.Name {
	case "shell", "container.exec":
		c.Argv, _ = importers.Strings(a.Command)
	case "shell_command":
		c.Line, _ = importers.JSONString(a.Command)
		c.Pwsh = p.windows(c.Workdir)
	case "exec_command", "unified_exec":
		c.Line = a.Cmd
		switch strings.ToLower(strings.TrimSuffix(filepath.Base(strings.ReplaceAll(a.Shell, `\`, "/")), ".exe")) {
		case "powershell", "pwsh":
			c.Pwsh = true
		case "cmd":
			c.Unknown = "the command runs in cmd.exe, which scrim does not follow"
		case "":
			c.Pwsh = p.windows(c.Workdir)
		}
	case "write_stdin":
		if r := p.st.Execs[strings.Trim(string(a.SessionID), `"`)]; r != nil {
			c.Line, c.Argv, c.Pwsh, c.Workdir, c.Unknown = r.Line, r.Argv, r.Pwsh, r.Workdir, r.Unknown
		} else {
			c.Unknown = "the output of a running command whose start is not in the transcript"
		}
	case "wait":
		if len(a.CellID) == 0 {
			c.Unknown = subagentAnswer // the multi-agent tools' wait: {ids, timeout_ms}
			break
		}
		if r := p.st.Cells[strings.Trim(string(a.CellID), `"`)]; r != nil {
			c.Script, c.Unknown = r.Script, r.Unknown
		} else {
			c.Unknown = "the output of a code-mode cell whose script is not in the transcript"
		}
	case "read_file":
		c.File = a.FilePath
	}
}

// windows reports whether a command runs on Windows: its folder, or the
// session's, is on a drive.
func (p *parser) windows(dir string) bool {
	if dir == "" {
		dir = p.st.Cwd
	}
	_, ok := policy.DrivePath(dir)
	return ok
}

func (p *parser) finishTurn() {
	switch {
	case p.turn == nil:
	case p.revise:
		added := p.turn.Parts
		p.sink.Revise(p.turn.SessionID, p.turn.Seq, func(m *session.Message) {
			m.Parts = append(m.Parts, added...)
			m.SyncSourcePaths()
		})
	default:
		p.turn.SyncSourcePaths()
		p.sink.Put(p.turn)
	}
	p.turn, p.revise = nil, false
}

// commandEvent notes what a command read per Codex's parsed_cmd. Codex's
// reading may add files to what scrim finds, never remove them: it reports
// "head -n 50 README.md .env" as one read of README.md.
func (p *parser) commandEvent(ev *payload) {
	if ev.CallID == "" {
		return
	}
	c := p.st.Calls[ev.CallID]
	if c == nil {
		c = &call{} // the event came before its call item
		p.st.Calls[ev.CallID] = c
	}
	cwd := ev.Cwd
	if cwd == "" {
		cwd = c.Workdir
	}
	if cwd == "" {
		cwd = p.st.Cwd
	}
	var reads []string
	for _, pc := range ev.ParsedCmd {
		if pc.Type == "read" {
			reads = append(reads, p.paths.Forms(readPath(pc), cwd)...)
		}
	}
	c.Known = true
	if len(reads) == 0 {
		return
	}
	c.Reads = append(c.Reads, reads...)
	if c.Output != nil {
		p.sink.Revise(c.Output.SessionID, c.Output.Seq, func(m *session.Message) { addReads(m, reads) })
	}
}

// output writes a call's output as a tool message, attributed to what the
// call read.
func (p *parser) output(it *payload, ts time.Time) {
	p.finishTurn()
	c := p.st.Calls[it.CallID]
	text := outputText(it.Output)
	m := &session.Message{Role: session.RoleTool, ToolCallID: it.CallID, Model: p.model(), CreatedAt: ts,
		Parts: []session.Part{{Kind: session.PartToolResult, Text: text}}}
	if c == nil || c.Name == "" {
		m.Meta.Note = "imported tool result whose call is not in the transcript"
		m.Meta.UnknownSource = "the tool call this result answers is not in the transcript"
		p.add(m)
		return
	}
	m.Tool = toolName(c.Name)
	c.Done = true
	if c.Noted {
		id := it.CallID
		p.sink.Revise(c.SessionID, c.Seq, func(m *session.Message) { m.Meta.Note = importers.DropUnpaired(m.Meta.Note, id) })
	}
	p.attribute(m, c, text)
	p.add(m)
	if c.Known {
		delete(p.st.Calls, it.CallID) // answered, and its event came: nothing more to add
		return
	}
	c.Output = &stored{m.SessionID, m.Seq}
}

// addReads adds files Codex says a command read.
func addReads(m *session.Message, reads []string) {
	if len(reads) == 0 {
		return
	}
	m.Meta.NoFiles = false
	m.SyncSourcePaths(reads...)
}

// skillRE is how Codex adds a skill's instructions to the conversation
// when it is used: a user text that names the skill and its SKILL.md, then
// the file's text.
var skillRE = regexp.MustCompile(`\A<skill>\n<name>[^<\n]*</name>\n<path>([^<\n]+)</path>\n`)

// skill cuts such a text into the lines around the skill's text and the
// text, attributed to its SKILL.md (forms: the file's other forms); a path
// that cannot be resolved makes it of unknown source (why). Any other text
// is one part of no file.
func (p *parser) skill(text string) (parts []session.Part, forms []string, why string) {
	plain := []session.Part{{Kind: session.PartText, Text: text}}
	m := skillRE.FindStringSubmatchIndex(text)
	if m == nil {
		return plain, nil, ""
	}
	body, tail := text[m[1]:], ""
	if i := strings.LastIndex(body, "</skill>"); i >= 0 {
		body, tail = body[:i], body[i:]
	}
	all := p.paths.Forms(text[m[2]:m[3]], p.st.Cwd)
	if len(all) == 0 {
		return plain, nil, "a skill's instructions whose file cannot be resolved"
	}
	for _, pt := range []session.Part{{Text: text[:m[1]]}, {Text: body, SourcePath: all[0]}, {Text: tail}} {
		if pt.Text != "" {
			pt.Kind = session.PartText
			parts = append(parts, pt)
		}
	}
	return parts, all[1:], ""
}
