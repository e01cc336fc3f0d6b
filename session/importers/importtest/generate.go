package importtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteClaudeTranscript writes a synthetic Claude Code transcript of about
// size bytes to w, for benchmarks and crash tests: turns of a prompt, an
// assistant turn split over several lines, and Read (with Claude Code's copy
// of the file in toolUseResult), Grep and Bash results; files read are 1–25
// KiB, every 50th 150 KiB. It returns the number of messages an import makes
// of it.
func WriteClaudeTranscript(w io.Writer, size int64) (messages int, err error) {
	return WriteClaude(w, size, ClaudeOptions{})
}

// ClaudeOptions vary a generated Claude Code transcript.
type ClaudeOptions struct {
	// ArrayResults writes tool results' content as an array of text
	// blocks, as newer Claude Code versions do, instead of a string.
	ArrayResults bool
	SessionID    string // default "b16"
	Cwd          string // default /home/dev/big
	FirstTurn    int    // turn numbers (and so IDs) start here
}

// WriteClaude is WriteClaudeTranscript with options.
func WriteClaude(w io.Writer, size int64, o ClaudeOptions) (messages int, err error) {
	if o.SessionID == "" {
		o.SessionID = "b16"
	}
	if o.Cwd == "" {
		o.Cwd = "/home/dev/big"
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	enc := json.NewEncoder(cw)
	enc.SetEscapeHTML(false)
	base := map[string]any{"isSidechain": false, "userType": "external", "cwd": o.Cwd, "sessionId": o.SessionID, "version": "2.0.14"}
	line := func(fields map[string]any) error {
		for k, v := range base {
			fields[k] = v
		}
		return enc.Encode(fields)
	}
	for turn := o.FirstTurn; cw.n < size; turn++ {
		ts := fmt.Sprintf("2025-06-01T10:%02d:%02d.000Z", turn/60%60, turn%60)
		msgID := fmt.Sprintf("msg_%d", turn)
		file := fmt.Sprintf("%s/pkg%d/file%d.go", o.Cwd, turn%37, turn)
		if err := line(map[string]any{"type": "user", "uuid": fmt.Sprintf("u%d", turn), "timestamp": ts,
			"message": map[string]any{"role": "user", "content": fmt.Sprintf("Step %d: look at %s and fix what is wrong", turn, file)}}); err != nil {
			return 0, err
		}
		calls := []map[string]any{
			{"type": "tool_use", "id": fmt.Sprintf("r%d", turn), "name": "Read", "input": map[string]any{"file_path": file}},
			{"type": "tool_use", "id": fmt.Sprintf("g%d", turn), "name": "Grep", "input": map[string]any{"pattern": "func", "path": o.Cwd, "output_mode": "content", "-n": true}},
			{"type": "tool_use", "id": fmt.Sprintf("b%d", turn), "name": "Bash", "input": map[string]any{"command": "go test ./..."}},
		}
		blocks := append([]map[string]any{{"type": "text", "text": "Let me look at the code and run the tests."}}, calls...)
		for _, b := range blocks {
			if err := line(map[string]any{"type": "assistant", "uuid": fmt.Sprintf("a%d-%v", turn, b["id"]), "timestamp": ts,
				"message": map[string]any{"id": msgID, "role": "assistant", "model": "claude-sonnet-4-5-20250929", "content": []any{b}}}); err != nil {
				return 0, err
			}
		}
		n := 10 + (turn*7919)%300 // lines in the file read: ~1–25 KiB, and now and then 150 KiB
		if turn%50 == 49 {
			n = 2000
		}
		var read strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&read, "%6d→\tx%d := compute(%q, %d) // keep \"quotes\" and tabs\t\n", i, i, file, i*turn)
		}
		var grep strings.Builder
		for i := 0; i < 30; i++ {
			fmt.Fprintf(&grep, "%s/pkg%d/file%d.go:%d:func F%d() {}\n", o.Cwd, i, i*turn%97, i+1, i)
		}
		results := []struct {
			id, text string
			tur      any
		}{
			{fmt.Sprintf("r%d", turn), read.String(), map[string]any{"type": "text", "file": map[string]any{"filePath": file, "content": read.String(), "numLines": n}}},
			{fmt.Sprintf("g%d", turn), grep.String(), map[string]any{"mode": "content", "numFiles": 30, "content": grep.String()}},
			{fmt.Sprintf("b%d", turn), strings.Repeat("ok  \tgithub.com/dev/big/pkg\t0.01s\n", 20), map[string]any{"stdout": "ok", "stderr": ""}},
		}
		content := func(text string) any {
			if o.ArrayResults {
				return []any{map[string]any{"type": "text", "text": text}}
			}
			return text
		}
		for _, r := range results {
			if err := line(map[string]any{"type": "user", "uuid": "t" + r.id, "timestamp": ts, "toolUseResult": r.tur,
				"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": r.id, "content": content(r.text)}}}}); err != nil {
				return 0, err
			}
		}
		messages += 1 + 1 + 3
	}
	return messages, bw.Flush()
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// WriteCodexRollout writes a synthetic Codex rollout of about size bytes:
// turns of a prompt, an assistant message, and shell calls whose events say
// they read a file, with outputs of 1–25 KiB, every 50th 150 KiB. It returns
// the number of messages an import makes of it.
func WriteCodexRollout(w io.Writer, size int64) (messages int, err error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	enc := json.NewEncoder(cw)
	enc.SetEscapeHTML(false)
	line := func(typ string, payload map[string]any) error {
		return enc.Encode(map[string]any{"timestamp": "2025-09-01T10:00:00.000Z", "type": typ, "payload": payload})
	}
	if err := line("session_meta", map[string]any{"id": "big", "cwd": "/home/dev/big", "model_provider": "openai"}); err != nil {
		return 0, err
	}
	if err := line("turn_context", map[string]any{"cwd": "/home/dev/big", "model": "gpt-5-codex"}); err != nil {
		return 0, err
	}
	text := func(kind, s string) []any { return []any{map[string]any{"type": kind, "text": s}} }
	for turn := 0; cw.n < size; turn++ {
		file := fmt.Sprintf("pkg%d/file%d.go", turn%37, turn)
		call := fmt.Sprintf("call_%d", turn)
		n := 10 + (turn*7919)%300
		if turn%50 == 49 {
			n = 2000
		}
		var out strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&out, "x%d := compute(%q, %d) // keep \"quotes\" and tabs\t\n", i, file, i*turn)
		}
		cmd := "cat " + file
		parsed := []any{map[string]any{"type": "read", "cmd": cmd, "name": file, "path": file}}
		steps := []func() error{
			func() error {
				return line("response_item", map[string]any{"type": "message", "role": "user", "content": text("input_text", "Step "+fmt.Sprint(turn)+": check "+file)})
			},
			func() error { return line("event_msg", map[string]any{"type": "user_message", "message": "Step"}) },
			func() error {
				return line("response_item", map[string]any{"type": "message", "role": "assistant", "content": text("output_text", "Reading "+file)})
			},
			func() error {
				args, _ := json.Marshal(map[string]any{"command": []string{"bash", "-lc", cmd}, "workdir": "/home/dev/big"})
				return line("response_item", map[string]any{"type": "function_call", "name": "shell", "arguments": string(args), "call_id": call})
			},
			func() error {
				return line("event_msg", map[string]any{"type": "exec_command_end", "call_id": call, "cwd": "/home/dev/big", "parsed_cmd": parsed, "aggregated_output": out.String(), "exit_code": 0})
			},
			func() error {
				return line("response_item", map[string]any{"type": "function_call_output", "call_id": call, "output": out.String()})
			},
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return 0, err
			}
		}
		messages += 3
	}
	return messages, bw.Flush()
}
