package crush

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// BenchmarkImport imports a generated database of 20,000 messages (5,000
// turns of a prompt, a view or bash call, its 2 KiB result and an
// answer), all of them still in its WAL, as a running Crush leaves them.
func BenchmarkImport(b *testing.B) {
	dir := b.TempDir()
	db := filepath.Join(dir, ".crush", "crush.db")
	body := strings.Repeat("func f() { return 42 } // some code of the file\n", 44)
	stmts := []importtest.Stmt{{SQL: schema}, {SQL: "INSERT INTO sessions (id, title, updated_at, created_at) VALUES ('s1', 'bench', 1, 1)"}, {SQL: "BEGIN"}}
	for turn := 0; turn < 5000; turn++ {
		at := int64(1751366400 + turn)
		file := fmt.Sprintf("%s/pkg%d/file%d.go", dir, turn%37, turn)
		call := toolCall(fmt.Sprintf("c%d", turn), "view", map[string]any{"file_path": file})
		out := "<file>\n" + body + "</file>\n"
		if turn%2 == 1 {
			call = toolCall(fmt.Sprintf("c%d", turn), "bash", map[string]any{"command": "sed -n 1,40p " + file})
			out = body
		}
		stmts = append(stmts,
			message(fmt.Sprintf("u%d", turn), "s1", "user", at, parts(text(fmt.Sprintf("Step %d: look at %s", turn, file)))),
			message(fmt.Sprintf("a%d", turn), "s1", "assistant", at, parts(text("Reading it."), call)),
			message(fmt.Sprintf("t%d", turn), "s1", "tool", at, parts(toolResult(fmt.Sprintf("c%d", turn), out, ""))),
			message(fmt.Sprintf("b%d", turn), "s1", "assistant", at, parts(text("It returns 42."))))
	}
	importtest.SQLite(b, db, append(stmts, importtest.Stmt{SQL: "COMMIT"})...)
	importtest.BenchSource(b, Source, db, 20000)
}
