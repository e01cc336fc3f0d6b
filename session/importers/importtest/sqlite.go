package importtest

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"
)

// SQLite creates the database path, in WAL mode with automatic checkpoints
// off, runs stmts (with args where a statement has ?), and leaves it open
// until t ends: what the statements wrote stays in the -wal file, as in a
// database an agent has open.
func SQLite(t testing.TB, path string, stmts ...Stmt) *sql.DB {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	for _, s := range append([]Stmt{{SQL: "PRAGMA journal_mode=WAL"}, {SQL: "PRAGMA wal_autocheckpoint=0"}}, stmts...) {
		if _, err := db.Exec(s.SQL, s.Args...); err != nil {
			t.Fatalf("%s: %v", s.SQL, err)
		}
	}
	return db
}

// Stmt is an SQL statement and its arguments.
type Stmt struct {
	SQL  string
	Args []any
}
