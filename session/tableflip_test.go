package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlippedTableNeverPanics flips bytes all through a store's table, one
// at a time, and opens the store in this process: Open either works or says
// the store is damaged. Badger opens tables in goroutines of its own, where
// a panic over damaged bytes would kill the test binary, not fail a check.
func TestFlippedTableNeverPanics(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		h, _ := s.Create(Header{Title: fmt.Sprintf("session %d", i)})
		for j := range 30 {
			s.Append(h.ID, text(fmt.Sprintf("message %d: %s", j, strings.Repeat("x", j*7))))
		}
	}
	s.Close()
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(tables) == 0 {
		t.Fatal("no table written")
	}
	orig, _ := os.ReadFile(tables[0])
	name := filepath.Base(tables[0])
	for at := 0; at < len(orig); at += max(1, len(orig)/400) {
		copyDir := filepath.Join(t.TempDir(), "store")
		os.MkdirAll(copyDir, 0o700)
		files, _ := os.ReadDir(dir)
		for _, f := range files {
			b, _ := os.ReadFile(filepath.Join(dir, f.Name()))
			if f.Name() == name {
				b = append([]byte(nil), orig...)
				b[at] ^= 0x41
			}
			os.WriteFile(filepath.Join(copyDir, f.Name()), b, 0o600)
		}
		st, err := Open(copyDir)
		if err == nil {
			st.Close()
			continue
		}
		if !errors.Is(err, ErrDamaged) && !errors.Is(err, ErrInUse) {
			t.Errorf("byte %d of %d flipped: %v", at, len(orig), err)
		}
	}
}

// TestOpenChecksEveryTable damages one data block of one table of a store
// of several, each table in turn: Open refuses every copy as damaged, so
// the check that runs the tables on every core skips none of them.
func TestOpenChecksEveryTable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	for i := range 3 { // each close flushes a table of its own
		s := openAt(t, dir)
		h := create(t, s, Header{Title: fmt.Sprintf("session %d", i)})
		fill(t, s, h.ID, 40)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(tables) < 3 {
		t.Fatalf("%d tables written, want 3", len(tables))
	}
	for _, damagedTable := range tables {
		copyDir := filepath.Join(t.TempDir(), "store")
		os.MkdirAll(copyDir, 0o700)
		files, _ := os.ReadDir(dir)
		for _, f := range files {
			b, _ := os.ReadFile(filepath.Join(dir, f.Name()))
			if f.Name() == filepath.Base(damagedTable) {
				b[len(b)/4] ^= 0x41 // in a data block: the index is at the end
			}
			os.WriteFile(filepath.Join(copyDir, f.Name()), b, 0o600)
		}
		st, err := Open(copyDir)
		if err == nil {
			st.Close()
			t.Errorf("%s damaged: the store opened", filepath.Base(damagedTable))
			continue
		}
		if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), filepath.Base(damagedTable)+" does not read: a block does not match its checksum") {
			t.Errorf("%s damaged: %v", filepath.Base(damagedTable), err)
		}
	}
}
