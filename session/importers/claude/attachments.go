package claude

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/scrim-dev/scrim/session"
)

// attachment is what Claude Code 2.1 writes on an "attachment" line: what it
// adds to the next request beside the user's words. Of its kinds, these hold
// files' content, which the model is sent and may repeat:
//
//	{"type":"file","filename":"/abs/x.go","displayPath":"x.go",
//	 "content":{"type":"text","file":{"filePath":"/abs/x.go","content":"…","numLines":…}}}
//	{"type":"edited_text_file","filename":"/abs/x.go","snippet":"12\t…"}
//	{"type":"selected_lines_in_ide","filename":"/abs/x.go","lineStart":3,"lineEnd":9,"content":"…"}
//	{"type":"nested_memory","path":"/abs/sub/CLAUDE.md","content":{"path":…,"type":"Project","content":"…"}}
//	{"type":"instructions","files":[{"path":"/abs/CLAUDE.md","type":"Project","content":"…"},…]}
//
// an @-mentioned file (or one restored after a compaction), the lines of a
// file changed outside Claude Code, the lines the user has selected in the
// editor Claude Code is connected to, a CLAUDE.md (or rule) of a folder it
// reached, and the instruction files it loaded at the start. The others (a
// folder's listing, a hook's output, references without content, Claude
// Code's own lists) are left out, as before.
type attachment struct {
	Type        string          `json:"type"`
	Filename    string          `json:"filename"`
	Path        string          `json:"path"`
	DisplayPath string          `json:"displayPath"`
	Snippet     string          `json:"snippet"`
	Content     json.RawMessage `json:"content"`
	LineStart   int             `json:"lineStart"`
	LineEnd     int             `json:"lineEnd"`
	Files       []struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	} `json:"files"`
}

// attached is one file's content in an attachment: what Claude Code said of
// it, its path, and the text.
type attached struct{ head, path, text string }

// files returns the files' content a attaches: none for the other kinds.
func (a *attachment) files() []attached {
	name := a.DisplayPath
	if name == "" {
		name = a.Filename
	}
	one := func(head, path, text string) []attached {
		if text == "" {
			return nil
		}
		return []attached{{head, path, text}}
	}
	switch a.Type {
	case "edited_text_file":
		return one("Claude Code noted that "+name+" was changed (outside it); the changed lines:", a.Filename, a.Snippet)
	case "selected_lines_in_ide":
		var s string
		_ = json.Unmarshal(a.Content, &s)
		return one(fmt.Sprintf("The user selected lines %d to %d of %s in the editor:", a.LineStart, a.LineEnd, name), a.Filename, s)
	case "file":
		var s string
		if json.Unmarshal(a.Content, &s) == nil {
			return one("Claude Code attached "+name+":", a.Filename, s)
		}
		var c struct {
			File struct {
				FilePath string `json:"filePath"`
				Content  string `json:"content"`
			} `json:"file"`
		}
		if json.Unmarshal(a.Content, &c) != nil {
			return nil // an image, a PDF, a notebook's cells: not text
		}
		path := a.Filename
		if path == "" {
			path = c.File.FilePath
			if name == "" {
				name = path
			}
		}
		return one("Claude Code attached "+name+":", path, c.File.Content)
	case "nested_memory":
		var c struct {
			Path    string `json:"path"`
			Content string `json:"content"`
		}
		if json.Unmarshal(a.Content, &c) != nil {
			return nil
		}
		path := a.Path
		if path == "" {
			path = c.Path
		}
		return one("Claude Code added the instructions in "+path+":", path, c.Content)
	case "instructions":
		var out []attached
		for _, f := range a.Files {
			out = append(out, one("Claude Code added the instructions in "+f.Path+":", f.Path, f.Content)...)
		}
		return out
	}
	return nil
}

// attachment imports an attachment line that holds files' content as a user
// message of its own: for each file, a line that says what Claude Code
// attached, and the content, attributed to the file, so that a tier that
// may not read it is not sent it, and (derived = "redact") not the
// assistant's quotes of it either. A file whose path cannot be resolved
// makes the message of unknown source.
func (p *parser) attachment(l *line) bool {
	if l.Attachment == nil {
		return true
	}
	files := l.Attachment.files()
	if len(files) == 0 {
		return true // bookkeeping, or nothing of a file's text
	}
	key := p.sessionKey(l)
	p.finishTurn(key)
	m := &session.Message{Role: session.RoleUser, CreatedAt: parseTime(l.Timestamp)}
	var forms []string
	for _, f := range files {
		m.Parts = append(m.Parts, session.Part{Kind: session.PartText, Text: f.head})
		body := session.Part{Kind: session.PartText, Text: strings.TrimSuffix(f.text, "\n")}
		if all := p.paths.Forms(f.path, cmp.Or(l.Cwd, p.st.Cwd)); len(all) > 0 {
			body.SourcePath = all[0]
			forms = append(forms, all[1:]...)
		} else {
			m.Meta.UnknownSource = "a file Claude Code attached whose path cannot be resolved"
		}
		m.Parts = append(m.Parts, body)
	}
	m.SyncSourcePaths(forms...)
	p.sink.Add(key, m)
	return true
}
