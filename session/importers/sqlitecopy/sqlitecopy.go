// Package sqlitecopy reads an agent's SQLite database without touching it:
// the database and its -wal and -shm files are copied into a temporary
// folder and the copy is opened. Opening the agent's own file, even read
// only, may checkpoint or delete its WAL and takes locks the agent then
// waits on; opening it immutable drops whatever is still only in the WAL
// (a third to a half of the messages of a real Crush database).
package sqlitecopy

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	_ "modernc.org/sqlite" // the pure-Go driver: the build stays cgo-free

	"github.com/scrim-dev/scrim/internal/fsx"
	"github.com/scrim-dev/scrim/internal/owned"
)

// Companions are the files beside a database whose changes change its
// content: its WAL. (Its -shm, an index of the WAL, is copied with it too,
// but changes whenever anyone reads.)
func Companions(file string) []string { return []string{file + "-wal"} }

// magic starts every SQLite 3 database file.
var magic = []byte("SQLite format 3\x00")

// ErrNotSQLite says a file is not an SQLite database.
var ErrNotSQLite = errors.New("not an SQLite database")

// DB is an open copy of a database; Close removes the copy.
type DB struct {
	*sql.DB
	dir string
}

// Open copies file (and its -wal and -shm, when there) to a temporary
// folder and opens the copy.
func Open(file string) (*DB, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	head := make([]byte, len(magic))
	_, err = io.ReadFull(f, head)
	f.Close()
	if err != nil || !bytes.Equal(head, magic) {
		return nil, ErrNotSQLite
	}
	// A copy holds the agent's whole history, every file it read: those a
	// kill left behind (their process could not remove them) go now, once
	// a process (the TUI opens a watched database at each change of its
	// WAL, and the temporary folder may hold thousands of entries).
	sweep.Do(func() { owned.RemoveOrphans(os.TempDir(), copyPrefix, copyOwner) })
	dir, err := held.make()
	if err != nil {
		return nil, err
	}
	if err := owned.Claim(dir, copyOwner); err != nil {
		held.remove(dir)
		return nil, err
	}
	copyPath := filepath.Join(dir, "db")
	if err := copyStable(file, copyPath); err != nil {
		held.remove(dir)
		return nil, err
	}
	db, err := sql.Open("sqlite", "file:"+copyPath+"?_pragma=busy_timeout(2000)")
	if err != nil {
		held.remove(dir)
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if err := db.Ping(); err != nil {
		db.Close()
		held.remove(dir)
		return nil, err
	}
	return &DB{DB: db, dir: dir}, nil
}

// Where copies are made (in the system's temporary folder), and the file in
// each that names the process that made it (owned.Claim).
const (
	copyPrefix = "scrim-sqlite-"
	copyOwner  = ".scrim-owner-pid"
)

// Close closes the copy and removes it.
func (d *DB) Close() error {
	err := d.DB.Close()
	if rerr := held.remove(d.dir); err == nil {
		err = rerr
	}
	return err
}

// RemoveAll removes every copy this process has open, for a process about
// to exit on a signal (Ctrl-C during an import), whose Closes will not run.
func RemoveAll() {
	held.mu.Lock()
	defer held.mu.Unlock()
	for dir := range held.dirs {
		os.RemoveAll(dir)
	}
}

// held is the copies this process made and has not removed.
var held copies

// sweep removes, once a process, the copies whose process is gone.
var sweep sync.Once

type copies struct {
	mu   sync.Mutex
	dirs map[string]bool
}

// make makes a folder for a copy in the temporary folder, readable by its
// owner only, as os.MkdirTemp does, but noted first, so that a signal
// just after it is made finds it (RemoveAll).
func (c *copies) make() (string, error) {
	return fsx.MakeNew(os.TempDir(), copyPrefix, c.note, func(dir string) error { return os.Mkdir(dir, 0o700) })
}

func (c *copies) note(dir string, ours bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dirs == nil {
		c.dirs = map[string]bool{}
	}
	if ours {
		c.dirs[dir] = true
	} else {
		delete(c.dirs, dir)
	}
}

// remove removes dir and forgets it.
func (c *copies) remove(dir string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.dirs, dir)
	return os.RemoveAll(dir)
}

// copyStable copies the database and its companions until a copy is made
// while none of them changed: a writer that checkpoints between the copy
// of the database and that of its WAL would otherwise leave a copy whose
// pages are in neither, or in both.
func copyStable(file, to string) error {
	from := []string{file, file + "-wal", file + "-shm"}
	dest := []string{to, to + "-wal", to + "-shm"}
	for try := 0; ; try++ {
		before := stamp(from[:2])
		for i := range from {
			os.Remove(dest[i])
			if err := fsx.CopyNew(from[i], dest[i]); err != nil && !(os.IsNotExist(err) && i > 0) {
				return fmt.Errorf("copy %s: %w", from[i], err)
			}
		}
		if stamp(from[:2]) == before || try == 4 {
			return nil
		}
	}
}

// stamp is the sizes and modification times of files, to tell a change.
func stamp(files []string) string {
	var b bytes.Buffer
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, "%d/%d;", fi.Size(), fi.ModTime().UnixNano())
		} else {
			b.WriteString("-;")
		}
	}
	return b.String()
}

// Columns lists table's columns ("" table: none); a schema that changed
// across versions is read by what it has.
func (d *DB) Columns(table string) (map[string]bool, error) {
	rows, err := d.Query("SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		cols[name] = true
	}
	return cols, rows.Err()
}
