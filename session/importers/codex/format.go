package codex

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/scrim-dev/scrim/session/importers"
)

// envelope is one rollout line, decoded in one pass: the payload kinds
// share one struct (their fields do not clash), so no part of a line is
// decoded twice. Older rollouts have bare items and a first meta line: the
// embedded payload takes their fields.
type envelope struct {
	Timestamp  string   `json:"timestamp"`
	Type       string   `json:"type"`
	Payload    *payload `json:"payload"`
	RecordType string   `json:"record_type"`
	payload
}

// payload holds the fields of every payload kind the importer uses:
// session_meta, turn_context, response_item and event_msg.
type payload struct {
	Type string `json:"type"`
	// session_meta, turn_context, command events
	Cwd           string `json:"cwd"`
	ModelProvider string `json:"model_provider"`
	Model         string `json:"model"`
	// Source is session_meta's: a string ("cli", "exec"), or for a
	// subagent's rollout an object (parentThread).
	Source json.RawMessage `json:"source"`
	// response items
	Role      string          `json:"role"`
	Content   []contentItem   `json:"content"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"` // function_call: JSON text
	Input     string          `json:"input"`     // custom_tool_call
	CallID    string          `json:"call_id"`
	ID        string          `json:"id"`
	Output    json.RawMessage `json:"output"` // a string, or {content, success}
	Action    *struct {
		Command          []string `json:"command"`
		WorkingDirectory string   `json:"working_directory"`
	} `json:"action"`
	// exec_command_begin/end
	ParsedCmd []parsedCmd     `json:"parsed_cmd"`
	Command   json.RawMessage `json:"command"` // the command's argv
}

// decodeLine decodes a line; a field of an unexpected type is skipped (and
// the rest decoded), only a syntax error makes the line unreadable.
func decodeLine(raw []byte, e *envelope) bool {
	err := json.Unmarshal(raw, e)
	var ute *json.UnmarshalTypeError
	return err == nil || errors.As(err, &ute)
}

type contentItem struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type parsedCmd struct {
	Type string `json:"type"`
	Cmd  string `json:"cmd"`
	Name string `json:"name"`
	Path string `json:"path"`
}

// shellArgs is what attribution needs from a call's arguments: shell and
// container.exec ({command: argv, workdir}), shell_command ({command:
// "line"}), exec_command ({cmd, workdir, shell}), write_stdin
// ({session_id}), wait ({cell_id}), read_file ({file_path}).
type shellArgs struct {
	Workdir   string          `json:"workdir"`
	Command   json.RawMessage `json:"command"`
	Cmd       string          `json:"cmd"`
	Shell     string          `json:"shell"`
	SessionID json.RawMessage `json:"session_id"`
	CellID    json.RawMessage `json:"cell_id"`
	FilePath  string          `json:"file_path"`
	Path      string          `json:"path"`
}

// outputText is a call output as the model saw it: a string, an object
// with content, or (code mode, newer builds) an array of content items.
func outputText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	if s, ok := importers.JSONString(raw); ok {
		return s
	}
	if raw[0] == '[' {
		var items []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &items) == nil {
			var b strings.Builder
			for _, it := range items {
				switch it.Type {
				case "input_text", "output_text", "text":
					if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
						b.WriteByte('\n')
					}
					b.WriteString(it.Text)
				case "input_image":
					b.WriteString("[image]")
				}
			}
			return b.String()
		}
	}
	var o struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &o) == nil && o.Content != "" {
		return o.Content
	}
	return string(raw)
}

// isShell reports whether a tool runs commands (its output is a command's).
func isShell(name string) bool {
	switch name {
	case "shell", "container.exec", "exec_command", "local_shell", "shell_command", "unified_exec", "write_stdin":
		return true
	}
	return false
}

// toolName is the scrim tool name of a Codex tool.
func toolName(name string) string {
	if isShell(name) {
		return "bash"
	}
	return strings.ToLower(name)
}

// readPath finds the file a single-read command names: Codex's path when
// recorded, else the command argument that ends with the displayed name
// (older Codex recorded only a display name), else that name.
func readPath(pc parsedCmd) string {
	if pc.Path != "" {
		return pc.Path
	}
	if pc.Name == "" {
		return ""
	}
	for _, tok := range strings.Fields(pc.Cmd) {
		tok = strings.Trim(tok, `'"`)
		if tok == pc.Name || strings.HasSuffix(tok, "/"+pc.Name) {
			return tok
		}
	}
	return pc.Name
}

// parentThread returns the thread a subagent's rollout names as its parent:
// Codex's multi-agent tools (spawn_agent) start one with
// {"subagent": {"thread_spawn": {"parent_thread_id": ID, "depth": 1, …}}}
// as its session_meta's source. Other sources give "".
func parentThread(source json.RawMessage) string {
	var s map[string]struct {
		ThreadSpawn *struct {
			ParentThreadID string `json:"parent_thread_id"`
		} `json:"thread_spawn"`
	}
	if len(source) == 0 || source[0] != '{' || json.Unmarshal(source, &s) != nil {
		return ""
	}
	for _, k := range []string{"subagent", "sub_agent"} {
		if a, ok := s[k]; ok && a.ThreadSpawn != nil {
			return a.ThreadSpawn.ParentThreadID
		}
	}
	return ""
}
