package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
)

// Agent is the name the CLI and origin records use.
const Agent = "gemini"

// Source is the importers.Source of Gemini CLI session files.
var Source = importers.Source{Agent: Agent, Read: read}

// Match tells the files under a folder that are Gemini CLI sessions:
// session-*.json(l) and the sub-agent files beside them in chats/, and
// "/chat save" checkpoints (checkpoint-*.json).
func Match(path string) bool {
	name := filepath.Base(path)
	ext := filepath.Ext(name)
	switch {
	case ext != ".json" && ext != ".jsonl":
		return false
	case strings.HasPrefix(name, "session-"), strings.HasPrefix(name, "checkpoint-"):
		return true
	}
	return ext == ".jsonl" && strings.Contains(filepath.ToSlash(path), "/chats/")
}

// record is one message record, of JSON lines or of the messages array.
type record struct {
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []toolCall      `json:"toolCalls"`
	Model     string          `json:"model"`
}

type toolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Args      json.RawMessage `json:"args"`
	Result    json.RawMessage `json:"result"`
	Status    string          `json:"status"`
	Timestamp string          `json:"timestamp"`
}

// header is the conversation's metadata: a JSON document's top level, a
// JSON-lines header and its "$set" patches.
type header struct {
	SessionID   string          `json:"sessionId"`
	ProjectHash string          `json:"projectHash"`
	StartTime   string          `json:"startTime"`
	Summary     string          `json:"summary"`
	Kind        string          `json:"kind"`
	Directories []string        `json:"directories"`
	Messages    json.RawMessage `json:"messages"`
}

// line is any JSON-lines record, decoded once.
type line struct {
	record
	header
	RewindTo *string         `json:"$rewindTo"`
	Set      json.RawMessage `json:"$set"`
}

// decode decodes raw into v; a field of an unexpected type is left out (and
// the rest decoded), only a syntax error makes raw unreadable.
func decode(raw []byte, v any) bool {
	err := json.Unmarshal(raw, v)
	var ute *json.UnmarshalTypeError
	return err == nil || errors.As(err, &ute)
}

func read(file string, paths *importers.Paths) (importers.Read, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return importers.Read{}, err
	}
	var conv conversation
	var rd importers.Read
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	switch {
	case bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0:
		return rd, errors.New("looks binary (NUL byte), not a Gemini CLI session: is this the right file?")
	case len(trimmed) == 0:
		return rd, nil
	case trimmed[0] == '[':
		if err := conv.checkpoint(trimmed, &rd); err != nil {
			return rd, err
		}
	case trimmed[0] == '{' && json.Valid(trimmed) && conv.isDocument(trimmed):
		conv.document(trimmed, &rd)
	case trimmed[0] == '{' && incomplete(trimmed):
		return rd, importers.ErrIncomplete
	case trimmed[0] == '{':
		if err := conv.lines(trimmed, &rd); err != nil {
			return rd, err
		}
	default:
		return rd, errors.New("not a Gemini CLI session (not JSON): is this the right file?")
	}
	b := builder{paths: paths, file: file}
	c := b.build(&conv, &rd)
	rd.Conversations = []importers.Conversation{c}
	return rd, nil
}

// incomplete reports whether data, which is not valid JSON, is a JSON
// document cut short (Gemini CLI rewrites the whole file on every turn, and
// a read can catch it halfway): pretty-printed, its first line is "{"
// alone; on one line, it has no line end and is not JSON.
func incomplete(data []byte) bool {
	if json.Valid(data) {
		return false
	}
	first, _, more := bytes.Cut(data, []byte{'\n'})
	return string(bytes.TrimSpace(first)) == "{" || !more
}

// conversation is a session file's content once its container is undone:
// the header, and the messages in order (rewinds applied).
type conversation struct {
	header header
	msgs   []record
	// turns are a checkpoint's API turns, which have no records.
	turns []turn
}

// isDocument reports whether data, one JSON value, is the JSON form
// {sessionId, projectHash, messages: [...]}, and reads its header. A file
// of JSON lines that holds one line (a header alone) is valid JSON too,
// without a messages array.
func (c *conversation) isDocument(data []byte) bool {
	return decode(data, &c.header) && len(c.header.Messages) > 0 && c.header.Messages[0] == '['
}

// document reads the JSON form's messages.
func (c *conversation) document(data []byte, rd *importers.Read) {
	var raws []json.RawMessage
	decode(c.header.Messages, &raws)
	for _, raw := range raws {
		rd.Records++
		var r record
		if !decode(raw, &r) || r.ID == "" {
			rd.Skipped++
			continue
		}
		c.msgs = append(c.msgs, r)
	}
}

// lines reads the JSON-lines form. Its first record must be a header or a
// message record: any other JSON-lines file (another agent's) is refused.
func (c *conversation) lines(data []byte, rd *importers.Read) error {
	order := []string{}
	byID := map[string]record{}
	first := true
	for len(data) > 0 {
		var raw []byte
		raw, data, _ = bytes.Cut(data, []byte{'\n'})
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		rd.Records++
		var l line
		ok := decode(raw, &l)
		if first {
			first = false
			if other := importers.LooksLike(raw); other != "" && other != "Gemini CLI" {
				return fmt.Errorf("looks like a %s transcript, not a Gemini CLI session: scrim import %s", other, strings.ToLower(strings.Fields(other)[0]))
			}
			if !ok || (l.SessionID == "" && l.record.ID == "") {
				return errors.New("not a Gemini CLI session (its first line is neither a session header nor a message): is this the right file?")
			}
		}
		switch {
		case !ok:
			rd.Skipped++
		case l.RewindTo != nil:
			// The rewound-to message and all after it are gone; an ID not
			// seen drops everything, as Gemini CLI does.
			i := indexOf(order, *l.RewindTo)
			if i < 0 {
				i = 0
			}
			for _, id := range order[i:] {
				delete(byID, id)
			}
			order = order[:i]
		case l.record.ID != "":
			if _, seen := byID[l.record.ID]; !seen {
				order = append(order, l.record.ID)
			}
			byID[l.record.ID] = l.record
		case len(l.Set) > 0:
			var h header
			if !decode(l.Set, &h) {
				rd.Skipped++
				continue
			}
			c.header.patch(h)
		case l.SessionID != "":
			c.header.patch(l.header)
		default:
			rd.Skipped++
		}
	}
	// A "$set" of messages (a migrated legacy record) stands for the records.
	if len(c.header.Messages) > 0 && c.header.Messages[0] == '[' {
		var raws []json.RawMessage
		if decode(c.header.Messages, &raws) && len(raws) > 0 {
			for _, raw := range raws {
				var r record
				if decode(raw, &r) && r.ID != "" {
					c.msgs = append(c.msgs, r)
				}
			}
			return nil
		}
	}
	for _, id := range order {
		c.msgs = append(c.msgs, byID[id])
	}
	return nil
}

func (h *header) patch(p header) {
	if p.SessionID != "" {
		h.SessionID = p.SessionID
	}
	if p.ProjectHash != "" {
		h.ProjectHash = p.ProjectHash
	}
	if p.StartTime != "" {
		h.StartTime = p.StartTime
	}
	if p.Summary != "" {
		h.Summary = p.Summary
	}
	if p.Kind != "" {
		h.Kind = p.Kind
	}
	if p.Directories != nil {
		h.Directories = p.Directories
	}
	if p.Messages != nil {
		h.Messages = p.Messages
	}
}

func indexOf(ids []string, id string) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// add appends m with the time of the record it came from.
func (b *builder) add(m *session.Message, ts string) {
	m.CreatedAt = parseTime(ts)
	b.msgs = append(b.msgs, m)
}
