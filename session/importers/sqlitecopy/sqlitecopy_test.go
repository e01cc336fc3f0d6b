package sqlitecopy

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// TestCopyReadsTheWAL: rows only in the -wal file of a database another
// connection holds open are read, and the agent's files stay byte for
// byte as they were.
func TestCopyReadsTheWAL(t *testing.T) {
	file := filepath.Join(t.TempDir(), "agent.db")
	importtest.SQLite(t, file, importtest.Stmt{SQL: "CREATE TABLE t (v TEXT)"}, importtest.Stmt{SQL: "INSERT INTO t VALUES ('only in the wal')"})
	before, _ := os.ReadFile(file + "-wal")
	if len(before) == 0 {
		t.Fatal("the fixture wrote no WAL")
	}
	db, err := Open(file)
	if err != nil {
		t.Fatal(err)
	}
	var v string
	if err := db.QueryRow("SELECT v FROM t").Scan(&v); err != nil || v != "only in the wal" {
		t.Fatalf("row %q, %v", v, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(file + "-wal"); !bytes.Equal(after, before) {
		t.Error("the agent's WAL changed")
	}
	if _, err := os.Stat(db.dir); !os.IsNotExist(err) {
		t.Errorf("the copy %s is left behind", db.dir)
	}
}

func TestNotSQLite(t *testing.T) {
	file := filepath.Join(t.TempDir(), "x.db")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(file); !errors.Is(err, ErrNotSQLite) {
		t.Fatalf("Open: %v", err)
	}
}
