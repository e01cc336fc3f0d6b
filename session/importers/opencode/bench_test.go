package opencode

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// BenchmarkImport imports a generated 1.2 database of 20,000 messages
// (5,000 turns of a prompt, an assistant step with a read or bash part and
// its 2 KiB output, and a second step with the answer; the tool result is
// a message of its own in scrim: 4 per turn).
func BenchmarkImport(b *testing.B) {
	dir := b.TempDir()
	db := filepath.Join(dir, "opencode.db")
	body := strings.Repeat("func f() { return 42 } // some code of the file\n", 44)
	stmts := []importtest.Stmt{{SQL: dbSchema}, {SQL: "INSERT INTO session VALUES ('ses_1', 'p', NULL, 's', ?, 'bench', 'v1.2.0', 1, 1)", Args: []any{dir}}, {SQL: "BEGIN"}}
	msg := func(id string, at int, data map[string]any) importtest.Stmt {
		return importtest.Stmt{SQL: "INSERT INTO message VALUES (?, 'ses_1', ?, ?, ?)", Args: []any{id, at, at, js(data)}}
	}
	prt := func(id, msgID string, data map[string]any) importtest.Stmt {
		return importtest.Stmt{SQL: "INSERT INTO part VALUES (?, ?, 'ses_1', 0, 0, ?)", Args: []any{id, msgID, js(data)}}
	}
	for turn := 0; turn < 5000; turn++ {
		at := 1751366400000 + turn*1000
		file := fmt.Sprintf("%s/pkg%d/file%d.go", dir, turn%37, turn)
		tool := toolPart(fmt.Sprintf("c%d", turn), "read", map[string]any{"filePath": file}, "completed", "<path>"+file+"</path>\n<type>file</type>\n<content>\n"+body+"</content>", nil)
		if turn%2 == 1 {
			tool = toolPart(fmt.Sprintf("c%d", turn), "bash", map[string]any{"command": "sed -n 1,40p " + file}, "completed", body, map[string]any{"exit": 0})
		}
		u, a1, a2 := fmt.Sprintf("msg_%05du", turn), fmt.Sprintf("msg_%05da", turn), fmt.Sprintf("msg_%05db", turn)
		asst := map[string]any{"role": "assistant", "modelID": "gpt-5", "providerID": "openai", "path": map[string]any{"cwd": dir}}
		stmts = append(stmts,
			msg(u, at, map[string]any{"role": "user"}), prt("prt_"+u, u, map[string]any{"type": "text", "text": fmt.Sprintf("Step %d: look at %s", turn, file)}),
			msg(a1, at+1, asst), prt("prt_"+a1+"1", a1, map[string]any{"type": "text", "text": "Reading it."}), prt("prt_"+a1+"2", a1, tool),
			msg(a2, at+2, asst), prt("prt_"+a2, a2, map[string]any{"type": "text", "text": "It returns 42."}))
	}
	importtest.SQLite(b, db, append(stmts, importtest.Stmt{SQL: "COMMIT"})...)
	importtest.BenchSource(b, Source, db, 20000)
}
