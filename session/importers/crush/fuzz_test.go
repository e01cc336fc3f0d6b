package crush

import (
	"testing"

	"github.com/scrim-dev/scrim/session/importers"
)

// FuzzParts builds a session out of rows with arbitrary roles and parts
// (the database around them is SQLite's, not scrim's, to check): it must
// never panic, and every message it builds must be one the store accepts
// (Validate is what the store checks). Seeds: testdata/fuzz/FuzzParts.
func FuzzParts(f *testing.F) {
	f.Add("assistant", parts(toolCall("c1", "view", map[string]any{"file_path": "/w/.env"})), parts(toolResult("c1", "<file>\n     1|x\n</file>", "")))
	f.Add("user", parts(map[string]any{"type": "binary", "data": map[string]any{"Path": "notes.txt", "MIMEType": "text/plain", "Data": "aGk="}}), []byte(`[{"type":"tool_result","data":{"tool_call_id":"c1","content":"Found 1 matches\nx:\n  Line 1, Char 1: y"}}]`))
	f.Add("assistant", parts(toolCall("c1", "bash", map[string]any{"command": "cd a; cat b"})), parts(toolResult("c1", "x\nExit code 1\n", `{"working_directory":"C:\\w"}`)))
	paths := importers.NewPaths()
	f.Fuzz(func(t *testing.T, role string, first, second []byte) {
		rd := build("/p/.crush/crush.db", []sessionRow{{id: "s", title: "fuzz"}},
			[]messageRow{{id: "a", session: "s", role: role, parts: first}, {id: "b", session: "s", role: "tool", parts: second}}, paths)
		for _, c := range rd.Conversations {
			for _, m := range c.Messages {
				if err := m.Validate(); err != nil {
					t.Fatalf("message the store refuses: %v", err)
				}
			}
		}
	})
}
