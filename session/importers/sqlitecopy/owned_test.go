//go:build unix

package sqlitecopy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// TestCopiesAreOwned: a copy names the process that made it; a copy whose
// process is gone (a kill left it, with the agent's whole history in it)
// is removed by a process's first Open, a copy another running scrim has
// open is not; RemoveAll removes this process's open copies (a signal's
// cleanup).
func TestCopiesAreOwned(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	file := filepath.Join(t.TempDir(), "agent.db")
	importtest.SQLite(t, file, importtest.Stmt{SQL: "CREATE TABLE t (v TEXT)"}, importtest.Stmt{SQL: "INSERT INTO t VALUES ('x')"})

	left := filepath.Join(tmp, copyPrefix+"left-by-a-kill")
	other := filepath.Join(tmp, copyPrefix+"another-scrim")
	for _, d := range []string{left, other} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "db"), []byte("the agent's history"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	gone := exec.Command(os.Args[0], "-test.run=^$")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(left, copyOwner), []byte(strconv.Itoa(gone.Process.Pid)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, copyOwner), []byte(strconv.Itoa(os.Getppid())), 0o600); err != nil {
		t.Fatal(err)
	}

	sweep = sync.Once{} // as a process's first Open
	db, err := Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if b, err := os.ReadFile(filepath.Join(db.dir, copyOwner)); err != nil || string(b) != strconv.Itoa(os.Getpid()) {
		t.Errorf("the copy's owner: %q, %v; want this process, %d", b, err, os.Getpid())
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the copy a kill left is still there (%v)", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a running scrim's copy was removed: %v", err)
	}
	RemoveAll()
	if _, err := os.Stat(db.dir); !os.IsNotExist(err) {
		t.Errorf("RemoveAll left the open copy %s", db.dir)
	}
}
