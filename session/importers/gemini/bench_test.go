package gemini

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// BenchmarkImport imports a generated JSON-lines session of 20,000
// messages: 5,000 turns of a prompt, a call to read_file or
// run_shell_command with its 2 KiB result, and an answer.
func BenchmarkImport(b *testing.B) {
	file := filepath.Join(b.TempDir(), "session-bench.jsonl")
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	enc := json.NewEncoder(f)
	enc.Encode(map[string]any{"sessionId": "bench", "projectHash": "p"})
	enc.Encode(map[string]any{"id": "ctx", "type": "user", "content": "<session_context>\nI'm currently working in the directory: /home/dev/big\n</session_context>"})
	body := strings.Repeat("func f() { return 42 } // some code of the file\n", 44)
	for turn := 0; turn < 5000; turn++ {
		ts := fmt.Sprintf("2025-10-01T10:%02d:%02d.000Z", turn/60%60, turn%60)
		file := fmt.Sprintf("pkg%d/file%d.go", turn%37, turn)
		call := map[string]any{"id": fmt.Sprintf("read_file-%d", turn), "name": "read_file", "args": map[string]any{"file_path": file}, "status": "success",
			"result": []any{map[string]any{"functionResponse": map[string]any{"id": fmt.Sprintf("read_file-%d", turn), "name": "read_file", "response": map[string]any{"output": body}}}}}
		if turn%2 == 1 {
			call = map[string]any{"id": fmt.Sprintf("sh-%d", turn), "name": "run_shell_command", "args": map[string]any{"command": "sed -n 1,40p " + file}, "status": "success",
				"result": []any{map[string]any{"functionResponse": map[string]any{"id": fmt.Sprintf("sh-%d", turn), "name": "run_shell_command", "response": map[string]any{"output": "Output: " + body + "Process Group PGID: 7"}}}}}
		}
		enc.Encode(map[string]any{"id": fmt.Sprintf("u%d", turn), "timestamp": ts, "type": "user", "content": fmt.Sprintf("Step %d: look at %s", turn, file)})
		enc.Encode(map[string]any{"id": fmt.Sprintf("g%d", turn), "timestamp": ts, "type": "gemini", "model": "gemini-2.5-pro", "content": "Reading it.", "toolCalls": []any{call}})
		enc.Encode(map[string]any{"id": fmt.Sprintf("a%d", turn), "timestamp": ts, "type": "gemini", "model": "gemini-2.5-pro", "content": "It returns 42."})
	}
	f.Close()
	importtest.BenchSource(b, Source, file, 20001)
}
