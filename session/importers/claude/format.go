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
	Type        string `json:"type"`
	UUID        string `json:"uuid"`
	ParentUUID  string `json:"parentUuid"`
	SessionID   string `json:"sessionId"`
	Cwd         string `json:"cwd"`
	Timestamp   string `json:"timestamp"`
	IsSidechain bool   `json:"isSidechain"`
	IsMeta      bool   `json:"isMeta"`
	// IsCompactSummary marks the summary /compact leaves, which is no
	// command's text.
	IsCompactSummary bool            `json:"isCompactSummary"`
	Summary          string          `json:"summary"`
	CustomTitle      string          `json:"customTitle"`
	AITitle          string          `json:"aiTitle"`
	Content          json.RawMessage `json:"content"` // system lines
	Message          *struct {
		ID    string `json:"id"`
		Role  string `json:"role"`
		Model string `json:"model"`
		// Content is an array of blocks, or a string (see decodeLine).
		Content []block `json:"content"`
	} `json:"message"`
	// ToolUseResult is an object, or a string for errors (then empty, as
	// encoding/json leaves it: it allocates before it finds the type error).
	ToolUseResult *toolUseResult `json:"toolUseResult"`
	// Attachment is an attachment line's (Claude Code 2.1: attachments.go).
	Attachment *attachment `json:"attachment"`
}

// decodeLine decodes a line as unmarshalLine does, faster.
//
// toolUseResult is taken out first and read by a fast skipper: it repeats
// the tool's output (a Read result's whole file), and only a few small
// fields of it are used. encoding/json then never sees it, so CutMember
// checks it (and the members before it) as encoding/json would: a line is
// unreadable here exactly when encoding/json finds a syntax error in it.
// When CutMember finds one it returns ok false, and the line is decoded
// whole so that encoding/json rejects it, as it rejects any other
// malformed line (the importer skips and counts it).
//
// The big contents of tool_result blocks are kept from encoding/json too
// (see withoutContents): its validity check and the skip it makes to copy a
// json.RawMessage cross an array 3 to 4 times slower per byte than the
// skipper, which is why array-form results cost more than string-form ones.
func decodeLine(raw []byte, l *line) bool {
	if rest, tur, ok := importers.CutMember(raw, "toolUseResult"); ok && tur != nil {
		raw = rest
		l.ToolUseResult = readToolUseResult(tur)
	}
	if small, cuts := withoutContents(raw); cuts != nil {
		fast := line{ToolUseResult: l.ToolUseResult}
		if json.Unmarshal(small, &fast) == nil && fast.Message != nil {
			for _, c := range cuts {
				if c.block < len(fast.Message.Content) {
					fast.Message.Content[c.block].Content = append(json.RawMessage(nil), raw[c.start:c.end]...)
				}
			}
			*l = fast
			return true
		}
		// Anything unusual (a type error, say) is read the usual way.
	}
	return unmarshalLine(raw, l)
}

// bigContent is the size from which a tool_result block's content is kept
// from encoding/json: below it, cutting costs more than it saves.
const bigContent = 256

// contentCut is where the content of message.content[block] is in a line.
type contentCut struct{ block, start, end int }

// withoutContents returns raw with the big content values of its
// message.content blocks replaced by null, and where each was; cuts is nil
// when there is nothing to cut or the line is anything but plain: not
// valid JSON as encoding/json reads it (then encoding/json must see it
// whole, to reject it), a key that appears twice (encoding/json would
// merge the two), message.content that is not an array.
func withoutContents(raw []byte) (small []byte, cuts []contentCut) {
	msgStart, msgEnd, n := -1, -1, 0
	if !importers.Members(raw, func(k, v []byte, _, _ int) bool {
		if importers.KeyIs(k, "message") {
			n++
			msgStart = cap(raw) - cap(v)
			msgEnd = msgStart + len(v)
		}
		return true
	}) || n != 1 || raw[msgStart] != '{' {
		return nil, nil
	}
	// The whole line is valid now: the fast walks may read inside it.
	msg := raw[msgStart:msgEnd]
	var content []byte
	n = 0
	importers.ValidMembers(msg, func(k, v []byte) bool {
		if importers.KeyIs(k, "content") {
			n++
			content = v
		}
		return true
	})
	if n != 1 || content[0] != '[' {
		return nil, nil
	}
	block, plain := 0, true
	importers.ValidElements(content, func(e []byte) bool {
		if e[0] == '{' {
			found := 0
			importers.ValidMembers(e, func(k, v []byte) bool {
				if importers.KeyIs(k, "content") {
					found++
					if len(v) >= bigContent {
						start := cap(raw) - cap(v)
						cuts = append(cuts, contentCut{block, start, start + len(v)})
					}
				}
				return true
			})
			if found > 1 {
				plain = false
				return false
			}
		}
		block++
		return true
	})
	if !plain || len(cuts) == 0 {
		return nil, nil
	}
	size := len(raw)
	for _, c := range cuts {
		size -= c.end - c.start - len("null")
	}
	small = make([]byte, 0, size)
	at := 0
	for _, c := range cuts {
		small = append(append(small, raw[at:c.start]...), "null"...)
		at = c.end
	}
	return append(small, raw[at:]...), cuts
}

// unmarshalLine decodes a line in one pass of encoding/json. Fields that
// hold a string where the struct expects an array or object
// (message.content as text, toolUseResult as an error message) are type
// errors that encoding/json skips while decoding everything else; a text
// content is then read on its own. Only syntax errors make a line
// unreadable.
func unmarshalLine(raw []byte, l *line) bool {
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
// toolUseResult value that CutMember checked. It reads them as
// encoding/json decodes v into a *toolUseResult, so that a line reads the
// same either way: keys matched as encoding/json matches them, a later
// duplicate decoded over an earlier one, null leaving a string as it is,
// and a value of the wrong type left as it is (a type error, which
// encoding/json skips too); a value that is not an object (an error
// message) gives an empty result, null none.
func readToolUseResult(v []byte) *toolUseResult {
	if len(v) == 0 || v[0] == 'n' {
		return nil
	}
	t := &toolUseResult{}
	if v[0] != '{' {
		return t
	}
	str := func(v []byte, dst *string) {
		if s, ok := importers.JSONString(v); ok {
			*dst = s
		}
	}
	is := importers.KeyIs
	importers.ValidMembers(v, func(k, val []byte) bool {
		switch {
		case is(k, "filePath"):
			str(val, &t.FilePath)
		case is(k, "mode"):
			str(val, &t.Mode)
		case is(k, "backgroundTaskId"):
			str(val, &t.Background)
		case is(k, "filenames"):
			_ = json.Unmarshal(val, &t.Filenames) // small; decoded over what it holds, as encoding/json does
		case is(k, "file"):
			if val[0] == 'n' {
				t.File = nil
				break
			}
			if t.File == nil { // encoding/json decodes a duplicate into the same struct
				t.File = &struct {
					FilePath string `json:"filePath"`
				}{}
			}
			if val[0] == '{' {
				importers.ValidMembers(val, func(k, val []byte) bool {
					if is(k, "filePath") {
						str(val, &t.File.FilePath)
					}
					return true
				})
			}
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
	if bs, ok := textBlocks(raw); ok {
		return bs, true
	}
	var bs []block
	if err := json.Unmarshal(raw, &bs); err != nil {
		return nil, false
	}
	return bs, true
}

// textBlocks reads an array of text blocks ({"type":"text","text":"…"},
// what newer Claude Code writes as a tool result's content) without
// encoding/json, which would scan and unescape the text a second time; raw
// was checked when the line was decoded. ok is false for anything else (an
// image, another key, a value that is not a string), which decodeBlocks
// then hands to encoding/json, so both read the same.
func textBlocks(raw []byte) (bs []block, ok bool) {
	bad := false
	ok = importers.ValidElements(raw, func(v []byte) bool {
		var b block
		fields := 0
		importers.ValidMembers(v, func(k, val []byte) bool {
			var dst *string
			switch string(k) {
			case "type":
				dst = &b.Type
			case "text":
				dst = &b.Text
			}
			s, isString := importers.JSONString(val)
			if dst == nil || !isString {
				bad = true
				return false
			}
			*dst = s
			fields++
			return true
		})
		if bad || fields == 0 || b.Type != "text" {
			bad = true
			return false
		}
		bs = append(bs, b)
		return true
	})
	return bs, ok && !bad && len(bs) > 0
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
