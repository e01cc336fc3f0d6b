package opencode

import (
	"cmp"
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/shellread"
)

// builder turns one session into scrim messages.
type builder struct {
	paths *importers.Paths
	cwd   string
	title string
	msgs  []*session.Message
	// copies are what its commands wrote into files from other files.
	copies importers.Copies
}

func build(file string, c *conversation, paths *importers.Paths, rd *importers.Read) importers.Conversation {
	b := &builder{paths: paths, cwd: c.info.Directory}
	for i := range c.msgs {
		if !b.message(&c.msgs[i]) {
			rd.Skipped++
		}
	}
	title := c.info.Title
	if title == "" || strings.HasPrefix(title, "New session - ") {
		title = b.title
	}
	h := session.Header{Title: importers.Title(title), WorkDir: c.info.Directory, CreatedAt: millis(c.info.Time.Created),
		Origin: "imported from opencode: " + file + " (session " + c.info.ID + ")"}
	if c.info.ParentID != "" {
		h.Title = "subagent: " + h.Title
		h.Origin += " (subagent of " + c.info.ParentID + ")"
	}
	return importers.Conversation{Key: c.info.ID, Header: h, Sub: c.info.ParentID != "", Messages: b.msgs}
}

// millis reads opencode's times: Unix milliseconds.
func millis(n int64) time.Time {
	if n <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(n).UTC()
}

func (b *builder) message(m *message) bool {
	cwd := b.cwd
	if m.Path != nil && m.Path.Cwd != "" {
		cwd = m.Path.Cwd
	}
	ts := millis(m.Time.Created)
	switch m.Role {
	case "user":
		b.user(m, cwd, ts)
	case "assistant":
		model := importers.ModelID(m.ProviderID, m.ModelID)
		a := &session.Message{Role: session.RoleAssistant, Model: model, CreatedAt: ts}
		b.msgs = append(b.msgs, a)
		for _, p := range m.parts {
			switch p.Type {
			case "text":
				if p.Text != "" {
					a.Parts = append(a.Parts, session.Part{Kind: session.PartText, Text: p.Text})
				}
			case "tool":
				b.tool(a, p, model, cwd, ts)
			}
		}
	default:
		return false
	}
	return true
}

// readReplay starts the synthetic text opencode puts in a user message for
// a file the user @-mentions; the next synthetic text is that file's
// content, as its read tool printed it. A folder's is replayed as the
// list tool's; any other tool's replay is of unknown source.
const (
	readReplay = "Called the Read tool with the following input: "
	listReplay = "Called the list tool with the following input: "
	anyReplay  = "Called the "
)

func (b *builder) user(m *message, cwd string, ts time.Time) {
	u := &session.Message{Role: session.RoleUser, CreatedAt: ts}
	var forms []string // of the file whose replayed read comes next
	var whole []string
	replayed := "" // the tool whose replayed output comes next, if not read
	for _, p := range m.parts {
		switch p.Type {
		case "text":
			pt := session.Part{Kind: session.PartText, Text: p.Text}
			switch {
			case p.Synthetic && strings.HasPrefix(p.Text, readReplay):
				var in struct {
					FilePath string `json:"filePath"`
				}
				decode([]byte(strings.TrimPrefix(p.Text, readReplay)), &in)
				forms = b.paths.Forms(in.FilePath, cwd)
				if forms == nil {
					u.Meta.UnknownSource = "a file the user mentioned, whose path is not recorded"
				}
			case p.Synthetic && strings.HasPrefix(p.Text, listReplay):
				// a folder's names: no file's content
			case p.Synthetic && strings.HasPrefix(p.Text, anyReplay):
				replayed, _, _ = strings.Cut(strings.TrimPrefix(p.Text, anyReplay), " ")
			case p.Synthetic && forms != nil:
				pt.SourcePath = forms[0]
				whole = append(whole, forms[1:]...)
				forms = nil
			case p.Synthetic && replayed != "":
				u.Meta.UnknownSource = "the output of the " + replayed + " tool, which opencode replayed into the prompt"
				replayed = ""
			case !p.Synthetic && b.title == "" && strings.TrimSpace(p.Text) != "":
				b.title = p.Text
			}
			if p.Text != "" {
				u.Parts = append(u.Parts, pt)
			}
		case "file":
			u.Parts = append(u.Parts, session.Part{Kind: session.PartText, Text: "[file: " + fileName(p) + "]"})
		}
	}
	u.SyncSourcePaths(whole...)
	b.msgs = append(b.msgs, u)
}

func fileName(p part) string {
	if u, err := url.Parse(p.URL); err == nil && u.Scheme == "file" {
		return u.Path
	}
	if p.Filename != "" {
		return p.Filename
	}
	return p.Mime
}

// args holds the inputs of the tools the importer reads.
type args struct {
	FilePath  string `json:"filePath"`
	PatchText string `json:"patchText"`
	Path      string `json:"path"`
	Command   string `json:"command"`
	Workdir   string `json:"workdir"`
	Redacted  any    `json:"redacted"`
}

// tool adds a tool part's call to the assistant message and its result
// after it.
func (b *builder) tool(a *session.Message, p part, model, cwd string, ts time.Time) {
	st := p.State
	if st == nil {
		st = &state{Status: "pending"}
	}
	input := st.Input
	if len(input) == 0 || !json.Valid(input) {
		input = nil
	}
	call := session.Part{Kind: session.PartToolCall, CallID: p.CallID, Name: p.Tool, Input: input}
	if input != nil {
		// What the input of a call that writes a file holds of it, what an
		// edit replaces and what it writes, is that file's content.
		var in args
		_ = json.Unmarshal(input, &in)
		switch p.Tool {
		case "edit", "write", "multiedit":
			if forms := b.paths.Forms(in.FilePath, cwd); len(forms) > 0 {
				call.SourcePath = forms[0]
			}
		case "patch":
			if file := importers.PatchedFile(in.PatchText); file != "" {
				call.SourcePath = b.paths.Canonical(file, cwd)
			}
		case "bash":
			call.SourcePath = b.paths.WrittenBy(shellread.Command{Line: in.Command, Dir: shellDir(b.paths, &in, cwd)})
		}
	}
	a.Parts = append(a.Parts, call)
	a.SyncSourcePaths()
	if st.Status != "completed" && st.Status != "error" {
		// Still running when the session was saved: no result to import.
		a.Meta.Note = importers.AddNote(a.Meta.Note, importers.UnpairedNote(p.CallID, p.Tool))
		return
	}
	m := &session.Message{Role: session.RoleTool, Tool: p.Tool, ToolCallID: p.CallID, Model: model, CreatedAt: ts, IsError: st.Status == "error"}
	out := st.Output
	if m.IsError {
		out = st.Error
	}
	var in args
	if input != nil {
		decode(input, &in)
	}
	whole := func() { m.Parts = []session.Part{{Kind: session.PartToolResult, Text: out}} }
	unknown := func(why string) {
		whole()
		m.Meta.UnknownSource = why
	}
	// file is the file the call names; nil, with the result of unknown
	// source, when it names none.
	file := func() []string {
		forms := b.paths.Forms(cmp.Or(in.FilePath, importers.PatchedFile(in.PatchText)), cwd)
		switch {
		case forms != nil:
		case in.Redacted != nil:
			unknown("the call's input was redacted in the export")
		default:
			unknown("the call names no file")
		}
		return forms
	}
	switch name := p.Tool; {
	case name == "bash":
		b.bash(m, &in, cwd, out)
	case m.IsError:
		whole() // an error names what failed, no file's content
		m.Meta.NoFiles = true
	case name == "read":
		if forms := file(); forms != nil {
			m.Attribute(b.copies.Follow(shellread.Reading{Files: forms}), "", out, "")
		}
	case name == "grep":
		base := cwd
		if in.Path != "" {
			base = b.paths.Canonical(in.Path, cwd)
		}
		if strings.HasPrefix(out, "No files found") {
			m.Attribute(shellread.Reading{}, "", out, "")
			break
		}
		m.Attribute(b.copies.Follow(importers.FileBlocks(out, func(n string) []string { return b.paths.Forms(n, base) })), "", out, "")
	case name == "edit" || name == "write" || name == "multiedit" || name == "patch":
		// Their results may quote the file: attributed to it as a whole.
		if forms := file(); forms != nil {
			whole()
			m.Meta.SourcePaths = forms
		}
	case name == "glob" || name == "list" || name == "todowrite" || name == "todoread":
		whole() // names of files, a plan: no file's content
		m.Meta.NoFiles = true
	case name == "webfetch" || name == "websearch" || name == "codesearch":
		unknown("content from the network (" + name + "), not of a file")
	case name == "task":
		unknown("a sub-agent's answer (its session is imported on its own)")
	default:
		unknown("the tool " + name + " is not known to scrim")
	}
	b.msgs = append(b.msgs, m)
}

// bash attributes a command's output through shellread; the command ran
// in its workdir, else the message's working folder.
func (b *builder) bash(m *session.Message, in *args, cwd, out string) {
	if in.Command == "" {
		why := "the call records no command"
		if in.Redacted != nil {
			why = "the call's input was redacted in the export"
		}
		m.Attribute(shellread.Reading{Unknown: why}, "", out, "")
		return
	}
	cmd := shellread.Command{Line: in.Command, Dir: shellDir(b.paths, in, cwd), Home: b.paths.Home()}
	m.Attribute(b.copies.Follow(shellread.Read(cmd, out, b.paths.Resolve)), "", out, "")
}

// shellDir is the folder a bash call runs in: its workdir, else the
// session's.
func shellDir(paths *importers.Paths, in *args, cwd string) string {
	if in.Workdir != "" {
		return paths.Canonical(in.Workdir, cwd)
	}
	return cwd
}
