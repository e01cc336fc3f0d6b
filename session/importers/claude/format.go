package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/scrim-dev/scrim/session/importers"
)

// line is the part of a transcript line the importer uses.
type line struct {
	Type        string          `json:"type"`
	UUID        string          `json:"uuid"`
	ParentUUID  string          `json:"parentUuid"`
	SessionID   string          `json:"sessionId"`
	Cwd         string          `json:"cwd"`
	Timestamp   string          `json:"timestamp"`
	IsSidechain bool            `json:"isSidechain"`
	IsMeta      bool            `json:"isMeta"`
	Summary     string          `json:"summary"`
	CustomTitle string          `json:"customTitle"`
	AITitle     string          `json:"aiTitle"`
	Content     json.RawMessage `json:"content"` // system lines
	Message     *struct {
		ID    string `json:"id"`
		Role  string `json:"role"`
		Model string `json:"model"`
		// Content is an array of blocks, or a string (see decodeLine).
		Content []block `json:"content"`
	} `json:"message"`
	// ToolUseResult is an object, or a string for errors (left nil then).
	ToolUseResult *toolUseResult `json:"toolUseResult"`
}

// decodeLine decodes a line in one pass of encoding/json. Fields that hold a
// string where the struct expects an array or object (message.content as
// text, toolUseResult as an error message) are type errors that
// encoding/json skips while decoding everything else; a text content is then
// read on its own. Only syntax errors make a line unreadable.
//
// toolUseResult is taken out first and read by a fast skipper: it repeats
// the tool's output (a Read result's whole file), and only a few small
// fields of it are used.
func decodeLine(raw []byte, l *line) bool {
	if rest, tur, ok := importers.CutMember(raw, "toolUseResult"); ok && tur != nil {
		raw = rest
		l.ToolUseResult = readToolUseResult(tur)
	}
	err := json.Unmarshal(raw, l)
	if err == nil {
		return true
	}
	var ute *json.UnmarshalTypeError
	if !errors.As(err, &ute) {
		return false
	}
	if l.Message != nil && l.Message.Content == nil {
		var s struct {
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(raw, &s) == nil {
			if text, ok := importers.JSONString(s.Message.Content); ok {
				l.Message.Content = []block{{Type: "text", Text: text}}
			}
		}
	}
	return true
}

// block is one element of a content array.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // tool_result: string or array
	IsError   bool            `json:"is_error"`
	Source    *struct {
		MediaType string `json:"media_type"`
	} `json:"source"`
}

// callInput is what attribution needs from a tool_use input.
type callInput struct {
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	Path         string `json:"path"`
	OutputMode   string `json:"output_mode"`
	Numbered     *bool  `json:"-n"`
	Glob         string `json:"glob"`
	Type         string `json:"type"`
	Command      string `json:"command"`
	BashID       string `json:"bash_id"` // BashOutput
	TaskID       string `json:"task_id"` // TaskOutput
	ShellID      string `json:"shell_id"`
}

// toolUseResult is what attribution needs from a line's toolUseResult
// (an object, or a plain string for errors).
type toolUseResult struct {
	File *struct {
		FilePath string `json:"filePath"`
	} `json:"file"`
	FilePath   string   `json:"filePath"`
	Mode       string   `json:"mode"`
	Filenames  []string `json:"filenames"`
	Background string   `json:"backgroundTaskId"`
}

// readToolUseResult picks the fields attribution uses out of a
// toolUseResult value; nil when it is not an object (errors are strings).
func readToolUseResult(v []byte) *toolUseResult {
	if len(v) == 0 || v[0] != '{' {
		return nil
	}
	t := &toolUseResult{}
	str := func(v []byte) string {
		s, _ := importers.JSONString(v)
		return s
	}
	is := func(k []byte, name string) bool { return bytes.EqualFold(k, []byte(name)) } // as encoding/json matches keys
	importers.Members(v, func(k, val []byte, _, _ int) bool {
		switch {
		case is(k, "filePath"):
			t.FilePath = str(val)
		case is(k, "mode"):
			t.Mode = str(val)
		case is(k, "backgroundTaskId"):
			t.Background = str(val)
		case is(k, "filenames"):
			t.Filenames = nil
			_ = json.Unmarshal(val, &t.Filenames)
		case is(k, "file"):
			t.File = nil
			if len(val) == 0 || val[0] != '{' {
				break
			}
			t.File = &struct {
				FilePath string `json:"filePath"`
			}{}
			importers.Members(val, func(k, val []byte, _, _ int) bool {
				if is(k, "filePath") {
					t.File.FilePath = str(val)
				}
				return true
			})
		}
		return true
	})
	return t
}

// decodeBlocks reads content that is a string (one text block) or an array.
func decodeBlocks(raw json.RawMessage) ([]block, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == 'n' {
		return nil, true
	}
	if raw[0] == '"' {
		s, ok := importers.JSONString(raw)
		if !ok {
			return nil, false
		}
		return []block{{Type: "text", Text: s}}, true
	}
	var bs []block
	if err := json.Unmarshal(raw, &bs); err != nil {
		return nil, false
	}
	return bs, true
}

// resultText is a tool_result's content as the model saw it: text blocks
// joined by newlines; images are named, not stored.
func resultText(raw json.RawMessage) string {
	bs, ok := decodeBlocks(raw)
	if !ok {
		return string(raw)
	}
	if len(bs) == 1 && bs[0].Type == "text" {
		return bs[0].Text
	}
	var b strings.Builder
	for i, x := range bs {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch x.Type {
		case "text":
			b.WriteString(x.Text)
		case "image":
			b.WriteString(imageNote(x))
		default:
			b.WriteString("[" + x.Type + "]")
		}
	}
	return b.String()
}

func imageNote(x block) string {
	if x.Source != nil && x.Source.MediaType != "" {
		return "[image: " + x.Source.MediaType + "]"
	}
	return "[image]"
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
