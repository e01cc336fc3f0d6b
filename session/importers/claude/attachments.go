package claude

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/scrim-dev/scrim/session"
)

// attachment is what Claude Code 2.1 writes on an "attachment" line: what it
// adds to the next request beside the user's words. Of its kinds, two hold
// a file's content, which the model is sent and may repeat:
//
//	{"type":"file","filename":"/abs/x.go","displayPath":"x.go",
//	 "content":{"type":"text","file":{"filePath":"/abs/x.go","content":"…","numLines":…}}}
//	{"type":"edited_text_file","filename":"/abs/x.go","snippet":"12\t…"}
//	{"type":"selected_lines_in_ide","filename":"/abs/x.go","lineStart":3,"lineEnd":9,"content":"…"}
//
// the first an @-mentioned file (or one restored after a compaction), the
// second the lines of a file changed outside Claude Code, the third the
// lines the user has selected in the editor Claude Code is connected to. The others (a
// folder's listing, a hook's output, references without content, Claude
// Code's own lists) are left out, as before.
type attachment struct {
	Type        string          `json:"type"`
	Filename    string          `json:"filename"`
	DisplayPath string          `json:"displayPath"`
	Snippet     string          `json:"snippet"`
	Content     json.RawMessage `json:"content"`
	LineStart   int             `json:"lineStart"`
	LineEnd     int             `json:"lineEnd"`
}

// text returns the file content a attaches, and whether it attaches any.
func (a *attachment) text() (string, bool) {
	switch a.Type {
	case "edited_text_file":
		return a.Snippet, a.Snippet != ""
	case "selected_lines_in_ide":
		var s string
		_ = json.Unmarshal(a.Content, &s)
		return s, s != ""
	case "file":
		var s string
		if json.Unmarshal(a.Content, &s) == nil {
			return s, s != ""
		}
		var c struct {
			Type string `json:"type"`
			File struct {
				FilePath string `json:"filePath"`
				Content  string `json:"content"`
			} `json:"file"`
		}
		if json.Unmarshal(a.Content, &c) != nil || c.File.Content == "" {
			return "", false // an image, a PDF, a notebook's cells: not text
		}
		if a.Filename == "" {
			a.Filename = c.File.FilePath
		}
		return c.File.Content, true
	}
	return "", false
}

// attachment imports an attachment line that holds a file's content as a
// user message of its own: a line that says what Claude Code attached, and
// the content, attributed to the file, so that a tier that may not read it
// is not sent it, and (derived = "redact") not the assistant's quotes of it
// either. One whose file cannot be resolved is of unknown source.
func (p *parser) attachment(l *line) bool {
	a := l.Attachment
	if a == nil {
		return true
	}
	text, ok := a.text()
	if !ok {
		return true // bookkeeping, or nothing of a file's text
	}
	name := a.DisplayPath
	if name == "" {
		name = a.Filename
	}
	head := "Claude Code attached " + name + ":"
	switch a.Type {
	case "edited_text_file":
		head = "Claude Code noted that " + name + " was changed (outside it); the changed lines:"
	case "selected_lines_in_ide":
		head = fmt.Sprintf("The user selected lines %d to %d of %s in the editor:", a.LineStart, a.LineEnd, name)
	}
	key := p.sessionKey(l)
	p.finishTurn(key)
	m := &session.Message{Role: session.RoleUser, CreatedAt: parseTime(l.Timestamp), Parts: []session.Part{
		{Kind: session.PartText, Text: head},
	}}
	body := session.Part{Kind: session.PartText, Text: strings.TrimSuffix(text, "\n")}
	if forms := p.paths.Forms(a.Filename, cwdOf(l, p.st.Cwd)); len(forms) > 0 {
		body.SourcePath = forms[0]
		m.Parts = append(m.Parts, body)
		m.SyncSourcePaths(forms[1:]...)
	} else {
		m.Parts = append(m.Parts, body)
		m.Meta.UnknownSource = "a file Claude Code attached whose path cannot be resolved"
	}
	p.sink.Add(key, m)
	return true
}

func cwdOf(l *line, fallback string) string {
	if l.Cwd != "" {
		return l.Cwd
	}
	return fallback
}
