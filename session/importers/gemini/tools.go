package gemini

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/shellread"
)

// call is a tool call as attribution needs it.
type call struct {
	id, name string
	args     json.RawMessage
	failed   bool
}

// args holds the arguments of every tool the importer reads, across
// versions: read_file took absolute_path, later file_path; grep path,
// later dir_path; run_shell_command a directory.
type args struct {
	AbsolutePath string `json:"absolute_path"`
	FilePath     string `json:"file_path"`
	Path         string `json:"path"`
	DirPath      string `json:"dir_path"`
	Directory    string `json:"directory"`
	Command      string `json:"command"`
}

func (a *args) file() string {
	for _, p := range []string{a.FilePath, a.AbsolutePath, a.Path} {
		if p != "" {
			return p
		}
	}
	return ""
}

// toolName is the scrim tool name of a Gemini CLI tool.
func toolName(name string) string {
	switch name {
	case "read_file", "read_many_files":
		return "read"
	case "grep", "search_file_content", "grep_search":
		return "grep"
	case "glob":
		return "glob"
	case "run_shell_command":
		return "bash"
	case "web_fetch":
		return "webfetch"
	}
	return strings.ToLower(name)
}

// result adds a call's result, attributed by its tool.
func (b *builder) result(c call, out []string, model, ts string) {
	m := &session.Message{Role: session.RoleTool, ToolCallID: c.id, Tool: toolName(c.name), Model: model, IsError: c.failed}
	var a args
	if len(c.args) > 0 {
		decode(c.args, &a)
	}
	text := strings.Join(out, "\n")
	whole := func() { m.Parts = []session.Part{{Kind: session.PartToolResult, Text: text}} }
	unknown := func(why string) {
		whole()
		m.Meta.UnknownSource = why
	}
	switch {
	case c.failed && c.name != "run_shell_command":
		whole() // an error names what failed, no file's content
		m.Meta.NoFiles = true
	case c.name == "read_file":
		forms, why := b.resolve(a.file())
		if why != "" {
			unknown(why)
			break
		}
		head, body := splitTruncated(text)
		m.Attribute(b.copies.Follow(shellread.Reading{Files: forms}), head, body, "")
	case c.name == "read_many_files":
		b.many(m, out)
	case c.name == "grep" || c.name == "search_file_content" || c.name == "grep_search":
		b.grep(m, &a, text)
		b.copies.Attach(m)
	case c.name == "write_file" || c.name == "replace" || c.name == "edit":
		// Their results may quote the file: attributed to it as a whole.
		forms, why := b.resolve(a.file())
		if why != "" {
			unknown(why)
			break
		}
		whole()
		m.Meta.SourcePaths = forms
	case c.name == "glob" || c.name == "list_directory" || c.name == "write_todos":
		whole() // names of files, a plan: no file's content
		m.Meta.NoFiles = true
	case c.name == "run_shell_command":
		b.shell(m, &a, text)
	case c.name == "web_fetch":
		unknown("the content of a web page (web_fetch), not of a file")
	case c.name == "google_web_search" || c.name == "web_search":
		unknown("web search results")
	default:
		unknown("the tool " + c.name + " is not known to scrim")
	}
	b.add(m, ts)
}

// resolve gives the canonical forms of a path a tool names, relative ones
// taken against the workspace; why says what is missing when it cannot.
// writes returns the file a call of the tool name with args writes (what
// its args hold of it, what an edit replaces and what it writes, is that
// file's content), "" for a tool that writes none or a path not resolved.
func (b *builder) writes(name string, raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var a args
	switch name {
	case "write_file", "replace", "edit":
		decode(raw, &a)
		if forms, why := b.resolve(a.file()); why == "" {
			return forms[0]
		}
	case "run_shell_command":
		decode(raw, &a)
		return b.paths.WrittenBy(shellread.Command{Line: a.Command, Dir: b.shellDir(&a)})
	}
	return ""
}

func (b *builder) resolve(path string) (forms []string, why string) {
	path = strings.TrimSpace(path)
	if path == "" {
		return nil, "the call names no file"
	}
	if !b.absolute(path) {
		if len(b.workspace) == 0 {
			return nil, "the path " + path + " is relative and the session records no workspace folder"
		}
		if len(b.workspace) > 1 {
			return nil, "the path " + path + " is relative and the session has several workspace folders"
		}
	}
	forms = b.paths.Forms(path, b.dir())
	if len(forms) == 0 {
		return nil, "the path " + path + " cannot be read"
	}
	return forms, ""
}

func (b *builder) absolute(path string) bool {
	if _, ok := policy.DrivePath(path); ok {
		return true
	}
	return filepath.IsAbs(path) || path == "~" || strings.HasPrefix(path, "~/")
}

// dir is the workspace folder relative paths are taken against.
func (b *builder) dir() string {
	if len(b.workspace) > 0 {
		return b.workspace[0]
	}
	return ""
}

// truncatedMark ends the header read_file puts before a partial read.
const truncatedMark = "--- FILE CONTENT (truncated) ---\n"

// splitTruncated cuts the "IMPORTANT: The file content has been
// truncated… Showing lines A-B of N" header from a partial read.
func splitTruncated(text string) (head, body string) {
	t := strings.TrimLeft(text, "\n")
	if !strings.HasPrefix(t, "IMPORTANT: The file content has been truncated.") {
		return "", text
	}
	i := strings.Index(text, truncatedMark)
	if i < 0 || strings.Count(text[:i], "\n") > 8 {
		return "", text
	}
	i += len(truncatedMark)
	return text[:i], text[i:]
}

// fileSep heads each file in read_many_files' output.
var fileSep = regexp.MustCompile(`^--- (.+) ---$`)

// many attributes read_many_files' output: each "--- path ---" block to
// that file. Text before the first block (the "Tool execution succeeded."
// stub) and the "--- End of content ---" piece are no file's.
func (b *builder) many(m *session.Message, out []string) {
	var r shellread.Reading
	seen := map[string]bool{}
	file := ""
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			r.Parts = append(r.Parts, shellread.Part{Text: cur.String(), File: file})
			cur.Reset()
		}
	}
	// Newer versions put each file in a text of its own, its heading first:
	// then a heading anywhere else is a line of a file. Older ones wrote
	// one text, the files separated by blank lines.
	ownParts := false
	for _, piece := range out[min(1, len(out)):] {
		ownParts = ownParts || strings.HasPrefix(piece, "--- ")
	}
	why := ""
	for _, piece := range out {
		flush()
		file = ""
		prev, first := "", true
		for _, l := range strings.SplitAfter(piece, "\n") {
			line := strings.TrimRight(l, "\r\n")
			// A heading names an absolute path, and starts a text or
			// (older versions) follows a blank line: a line of a file that
			// only looks like one stays that file's. So does "--- End of
			// content ---" when it is not a text of its own: what follows it
			// is not trusted to be no file's.
			sep := fileSep.FindStringSubmatch(line)
			if sep != nil && (!first && (ownParts || strings.TrimSpace(prev) != "") || !b.absolute(sep[1])) {
				sep = nil
			}
			prev, first = line, false
			if sep != nil {
				flush()
				file = ""
				forms, w := b.resolve(sep[1])
				if w != "" {
					why = w
				} else {
					file = forms[0]
					r.Files = importers.AddFiles(r.Files, seen, forms)
				}
			}
			cur.WriteString(l)
		}
	}
	flush()
	text := strings.Join(out, "\n")
	switch {
	case why != "":
		m.Attribute(shellread.Reading{Unknown: why, Files: r.Files}, "", text, "")
	case len(r.Files) == 0 && (len(out) > 1 || len(text) > 200):
		m.Attribute(shellread.Reading{Unknown: "read_many_files output that names none of its files"}, "", text, "")
	case len(r.Files) == 0:
		m.Attribute(shellread.Reading{}, "", text, "") // "No files matching the criteria were found."
	default:
		m.Attribute(r, "", text, "")
	}
}

var (
	grepFile  = regexp.MustCompile(`^File: (.+?)\r?$`)
	grepNames = regexp.MustCompile(`^Found \d+ files? with matches for pattern `)
)

// grep attributes grep's output per file: "File: path" heads the lines
// (L12: text) of each file, named relative to the folder searched.
func (b *builder) grep(m *session.Message, a *args, text string) {
	if strings.HasPrefix(text, "No matches found") {
		m.Attribute(shellread.Reading{}, "", text, "")
		return
	}
	base := a.DirPath
	if base == "" {
		base = a.Path
	}
	var dir string
	switch {
	case base != "":
		forms, why := b.resolve(base)
		if why != "" {
			m.Attribute(shellread.Reading{Unknown: why}, "", text, "")
			return
		}
		dir = forms[0]
	case len(b.workspace) == 1:
		dir = b.workspace[0]
	case len(b.workspace) > 1:
		m.Attribute(shellread.Reading{Unknown: "grep searched several workspace folders and names its files relative to each"}, "", text, "")
		return
	default:
		m.Attribute(shellread.Reading{Unknown: "grep names files relative to a workspace folder the session does not record"}, "", text, "")
		return
	}
	var r shellread.Reading
	seen := map[string]bool{}
	addFiles := func(forms []string) { r.Files = importers.AddFiles(r.Files, seen, forms) }
	lines := strings.SplitAfter(text, "\n")
	if len(lines) > 0 && grepNames.MatchString(lines[0]) {
		for _, l := range lines[1:] {
			if name := strings.TrimSpace(l); name != "" {
				addFiles(b.paths.Forms(name, dir))
			}
		}
		m.Attribute(shellread.Reading{Files: r.Files}, "", text, "")
		return
	}
	file := ""
	var cur strings.Builder
	for _, l := range lines {
		if f := grepFile.FindStringSubmatch(strings.TrimRight(l, "\n")); f != nil {
			if cur.Len() > 0 {
				r.Parts = append(r.Parts, shellread.Part{Text: cur.String(), File: file})
				cur.Reset()
			}
			forms := b.paths.Forms(f[1], dir)
			if len(forms) == 0 {
				m.Attribute(shellread.Reading{Unknown: "grep names a file that cannot be read: " + f[1]}, "", text, "")
				return
			}
			file = forms[0]
			addFiles(forms)
		}
		cur.WriteString(l)
	}
	if cur.Len() > 0 {
		r.Parts = append(r.Parts, shellread.Part{Text: cur.String(), File: file})
	}
	if len(r.Files) == 0 {
		m.Attribute(shellread.Reading{Unknown: "grep output that names none of its files"}, "", text, "")
		return
	}
	m.Attribute(r, "", text, "")
}

// shellTail matches the lines run_shell_command puts after the output.
var shellTail = regexp.MustCompile(`^(Error|Exit Code|Signal|Background PIDs|Process Group PGID): `)

// shell attributes run_shell_command's output through shellread, the
// command run in its directory (relative to the workspace) or the
// workspace.
func (b *builder) shell(m *session.Message, a *args, text string) {
	head, body, tail := splitShell(text)
	cmd := shellread.Command{Line: a.Command, Dir: b.shellDir(a), Home: b.paths.Home()}
	if a.Command == "" {
		m.Attribute(shellread.Reading{Unknown: "the call records no command"}, head, body, tail)
		return
	}
	m.Attribute(b.copies.Follow(shellread.Read(cmd, body, b.paths.Resolve)), head, body, tail)
}

// shellDir is the folder a run_shell_command call runs in: the one it
// names, else the session's; "" when that cannot be told.
func (b *builder) shellDir(a *args) string {
	dir := b.dir()
	if d := firstNonEmpty(a.Directory, a.DirPath); d != "" {
		if b.absolute(d) || dir != "" {
			return b.paths.Canonical(d, dir)
		}
		return ""
	}
	return dir
}

// splitShell cuts run_shell_command's framing from the command's output:
// "Output: " (or, in older versions, "Command: … Directory: … Stdout: ")
// before it, and "Exit Code: 1", "Process Group PGID: n" lines after it.
func splitShell(text string) (head, body, tail string) {
	body = text
	switch {
	case strings.HasPrefix(text, "Output: "):
		head, body = "Output: ", text[len("Output: "):]
	case strings.HasPrefix(text, "Command: "):
		if i := strings.Index(text, "\nStdout: "); i >= 0 {
			i += len("\nStdout: ")
			head, body = text[:i], text[i:]
		}
	}
	end := len(body)
	for end > 0 {
		start := strings.LastIndexByte(body[:end], '\n')
		l := body[start+1 : end]
		if !shellTail.MatchString(l) || start < 0 {
			break
		}
		end = start
		if end > 0 && body[end-1] == '\r' {
			end--
		}
	}
	return head, body[:end], body[end:]
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
