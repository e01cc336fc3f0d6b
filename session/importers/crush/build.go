package crush

import (
	"cmp"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/shellread"
)

// builder turns one session's rows into scrim messages.
type builder struct {
	paths *importers.Paths
	cwd   string
	// moved: a command of the session may have moved the shell; lastDir
	// is where the last one's result says it was.
	moved   bool
	lastDir string
	title   string
	calls   map[string]*call // by call ID
	jobs    map[string]job   // background shells, by shell ID
	msgs    []*session.Message
	// copies are what its commands wrote into files from other files.
	copies importers.Copies
}

type call struct {
	name  string
	input json.RawMessage
	msg   *session.Message // the assistant message that made it
	done  bool
}

// job is a background command: job_output prints more of its output.
type job struct{ command, dir string }

// message adds one row's messages; false when the row is unreadable or of
// a role not known.
func (b *builder) message(row messageRow) bool {
	var parts []part
	if !decode(row.parts, &parts) {
		return false
	}
	ts := unix(row.created)
	switch row.role {
	case "user", "system":
		m := &session.Message{Role: session.Role(row.role), CreatedAt: ts}
		for _, p := range parts {
			b.userPart(m, p)
		}
		if row.role == "user" && b.title == "" {
			b.title = m.Text()
		}
		b.msgs = append(b.msgs, m)
	case "assistant":
		m := &session.Message{Role: session.RoleAssistant, Model: modelID(row.provider, row.model), CreatedAt: ts}
		moved := false // a command before in this message may move the shell
		for _, p := range parts {
			var d data
			decode(p.Data, &d)
			switch p.Type {
			case "text":
				if d.Text != "" {
					m.Parts = append(m.Parts, session.Part{Kind: session.PartText, Text: d.Text})
				}
			case "tool_call":
				input := json.RawMessage(d.Input)
				if !json.Valid(input) {
					input = nil
				}
				b.calls[d.ID] = &call{name: d.Name, input: input, msg: m}
				writes := b.writes(d.Name, input, moved)
				moved = moved || d.Name == "bash" && cdLike.MatchString(string(input))
				m.Parts = append(m.Parts, session.Part{Kind: session.PartToolCall, CallID: d.ID, Name: d.Name, Input: input, SourcePath: writes})
			}
		}
		m.SyncSourcePaths()
		b.msgs = append(b.msgs, m)
	case "tool":
		for _, p := range parts {
			if p.Type != "tool_result" {
				continue
			}
			var d data
			decode(p.Data, &d)
			b.result(d, modelID(row.provider, row.model), row)
		}
	default:
		return false
	}
	return true
}

// writes returns the file a call of the tool name with input writes (what
// its input holds of it, what an edit replaces and what it writes, is that
// file's content), "" for a tool that writes none or names no file.
//
// moved says that a command before it in the same message may have moved
// the shell, before its result says where to (bash).
func (b *builder) writes(name string, input json.RawMessage, moved bool) string {
	if input == nil {
		return ""
	}
	var a args
	switch name {
	case "edit", "multiedit", "write":
		decode(input, &a)
		if forms := b.paths.Forms(a.FilePath, b.cwd); len(forms) > 0 {
			return forms[0]
		}
	case "patch":
		decode(input, &a)
		if file := importers.PatchedFile(a.PatchText); file != "" {
			return b.paths.Canonical(file, b.cwd)
		}
	case "bash":
		decode(input, &a)
		dir := b.bashDir(&a)
		if moved && a.WorkingDir == "" {
			dir = ""
		}
		return b.paths.WrittenBy(shellread.Command{Line: a.Command, Dir: dir})
	}
	return ""
}

// userPart adds a part of a user message. A text attachment is a file's
// content: it is attributed to that file.
func (b *builder) userPart(m *session.Message, p part) {
	var d data
	decode(p.Data, &d)
	switch p.Type {
	case "text":
		if d.Text != "" {
			m.Parts = append(m.Parts, session.Part{Kind: session.PartText, Text: d.Text})
		}
	case "binary":
		if !strings.HasPrefix(d.MIMEType, "text/") {
			m.Parts = append(m.Parts, session.Part{Kind: session.PartText, Text: "[image: " + d.MIMEType + "]"})
			return
		}
		forms := b.paths.Forms(d.Path, b.cwd)
		pt := session.Part{Kind: session.PartText, Text: string(d.Bytes)}
		if len(forms) > 0 {
			pt.SourcePath = forms[0]
		}
		m.Parts = append(m.Parts, pt)
		if len(forms) > 0 {
			m.SyncSourcePaths(forms[1:]...)
		} else {
			m.Meta.UnknownSource = "an attached file whose path is not recorded"
		}
	}
}

// finish notes the calls that got no result.
func (b *builder) finish() {
	for _, id := range slices.Sorted(maps.Keys(b.calls)) {
		if c := b.calls[id]; !c.done {
			c.msg.Meta.Note = importers.AddNote(c.msg.Meta.Note, importers.UnpairedNote(id, c.name))
		}
	}
}

// toolName is the scrim tool name of a Crush tool.
func toolName(name string) string {
	switch name {
	case "view":
		return "read"
	case "fetch", "web_fetch", "agentic_fetch":
		return "webfetch"
	case "job_output":
		return "bash"
	}
	return name
}

// args holds the arguments of the tools the importer reads.
type args struct {
	FilePath   string `json:"file_path"`
	PatchText  string `json:"patch_text"`
	Path       string `json:"path"`
	Command    string `json:"command"`
	WorkingDir string `json:"working_dir"`
	ShellID    string `json:"shell_id"`
}

// bashMeta is the part of a bash result's metadata attribution needs.
type bashMeta struct {
	WorkingDirectory string `json:"working_directory"`
	ShellID          string `json:"shell_id"`
}

func (b *builder) result(d data, model string, row messageRow) {
	m := &session.Message{Role: session.RoleTool, ToolCallID: d.ToolCallID, Model: model, IsError: d.IsError, CreatedAt: unix(row.created)}
	c := b.calls[d.ToolCallID]
	whole := func() { m.Parts = []session.Part{{Kind: session.PartToolResult, Text: d.Content}} }
	if c == nil {
		whole()
		m.Tool = toolName(d.Name)
		m.Meta.Note = "imported tool result whose call is not in the session"
		m.Meta.UnknownSource = "the tool call this result answers is not in the session"
		b.msgs = append(b.msgs, m)
		return
	}
	c.done = true
	m.Tool = toolName(c.name)
	var a args
	if len(c.input) > 0 {
		decode(c.input, &a)
	}
	unknown := func(why string) {
		whole()
		m.Meta.UnknownSource = why
	}
	switch name := c.name; {
	case name == "bash":
		b.bash(m, &a, d)
	case name == "job_output":
		if j, ok := b.jobs[a.ShellID]; ok {
			b.shell(m, j.command, j.dir, d.Content)
		} else {
			unknown("the output of a background command whose start is not in the session")
		}
	case d.IsError:
		whole() // an error names what failed, no file's content
		m.Meta.NoFiles = true
	case name == "view":
		if forms := b.paths.Forms(a.FilePath, b.cwd); len(forms) > 0 {
			m.Attribute(b.copies.Follow(shellread.Reading{Files: forms}), "", d.Content, "")
		} else {
			unknown("the call names no file")
		}
	case name == "grep":
		b.grep(m, &a, d.Content)
		b.copies.Attach(m)
	case name == "edit" || name == "multiedit" || name == "write" || name == "patch":
		// Their results may quote the file: attributed to it as a whole.
		if forms := b.paths.Forms(cmp.Or(a.FilePath, importers.PatchedFile(a.PatchText)), b.cwd); len(forms) > 0 {
			whole()
			m.Meta.SourcePaths = forms
		} else {
			unknown("the call names no file")
		}
	case name == "glob" || name == "ls" || name == "todos" || name == "job_kill":
		whole() // names of files, a plan: no file's content
		m.Meta.NoFiles = true
	case name == "fetch" || name == "web_fetch" || name == "agentic_fetch" || name == "download" || name == "web_search" || name == "sourcegraph":
		unknown("content from the network (" + name + "), not of a file")
	case name == "agent":
		unknown("a sub-agent's answer (its session is imported on its own)")
	default:
		unknown("the tool " + name + " is not known to scrim")
	}
	b.msgs = append(b.msgs, m)
}

// bash attributes a command's output. Where it ran is certain when the
// call names its working_dir, or when no command before it in the session
// could have moved: Crush's shell persisted between commands in some
// versions (each started where the last left it, which its result's
// working_directory records) and starts afresh in the project in others.
// When the two differ, relative names are not resolved.
func (b *builder) bash(m *session.Message, a *args, d data) {
	var meta bashMeta
	if d.Metadata != "" {
		decode([]byte(d.Metadata), &meta)
	}
	dir := b.bashDir(a)
	b.shell(m, a.Command, dir, d.Content)
	if meta.ShellID != "" {
		b.jobs[meta.ShellID] = job{a.Command, dir}
	}
	if cdLike.MatchString(a.Command) {
		b.moved = true
	}
	b.lastDir = meta.WorkingDirectory
}

// cdLike matches commands that may leave a shell in another folder.
var cdLike = regexp.MustCompile(`(^|[^[:alnum:]_-])(cd|pushd|popd)([^[:alnum:]_-]|$)`)

// tailLine matches what Crush puts after a command's output.
var tailLine = regexp.MustCompile(`^(Exit code -?\d+|<cwd>.*</cwd>|Command was aborted before completion)\s*$`)

// bashDir is the folder a bash call runs in, "" when it cannot be told
// (see bash).
func (b *builder) bashDir(a *args) string {
	switch {
	case a.WorkingDir != "":
		return b.paths.Canonical(a.WorkingDir, b.cwd)
	case b.moved && b.lastDir != b.cwd:
		return ""
	}
	return b.cwd
}

func (b *builder) shell(m *session.Message, command, dir, out string) {
	if command == "" {
		m.Attribute(shellread.Reading{Unknown: "the call records no command"}, "", out, "")
		return
	}
	body, tail := out, ""
	for {
		i := strings.LastIndexByte(strings.TrimRight(body, "\n"), '\n')
		if i < 0 || !tailLine.MatchString(strings.TrimRight(body[i+1:], "\n")) {
			break
		}
		body, tail = body[:i+1], body[i+1:]+tail
	}
	cmd := shellread.Command{Line: command, Dir: dir, Home: b.paths.Home()}
	m.Attribute(b.copies.Follow(shellread.Read(cmd, body, b.paths.Resolve)), "", body, tail)
}

// grep attributes Crush's grep output per file: "path:" heads the
// "  Line 131, Char 9: text" lines of each file.
func (b *builder) grep(m *session.Message, a *args, out string) {
	if strings.HasPrefix(out, "No files found") {
		m.Attribute(shellread.Reading{}, "", out, "")
		return
	}
	base := b.cwd
	if a.Path != "" {
		base = b.paths.Canonical(a.Path, b.cwd)
	}
	m.Attribute(importers.FileBlocks(out, func(name string) []string { return b.paths.Forms(name, base) }), "", out, "")
}
