package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSettle: a bulk write of short messages, of which Badger keeps keys
// and values in its tables, leaves compactions owing; Settle waits for
// them, so that the process that opens the store next does not do them.
func TestSettle(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 60 MB of tables")
	}
	st := openTemp(t)
	h, err := st.Create(Header{Title: "short messages"})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("a short line of a long session. ", 12)
	owed := false
	for round := 0; round < 20 && !owed; round++ {
		batch := make([]*Message, 0, 20000)
		for i := range cap(batch) {
			batch = append(batch, &Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: fmt.Sprintf("%d.%d %s", round, i, text)}}})
		}
		if err := st.AppendBulk(h.ID, batch); err != nil {
			t.Fatal(err)
		}
		owed = !st.settled()
	}
	if !owed {
		t.Fatal("fixture: the writes left no compaction owing")
	}
	if ok, err := st.Settle(time.Minute); err != nil || !ok {
		t.Fatalf("Settle gave up within a minute (%v)", err)
	}
	// By Badger's own figures: a level being compacted has no score, so
	// a level over its target size is one still owing.
	for _, l := range st.db.Levels() {
		if l.Score >= 1 || l.Level > 0 && l.Size > l.TargetSize {
			t.Fatalf("Settle returned with level %d at %d bytes of %d (score %.2f)", l.Level, l.Size, l.TargetSize, l.Score)
		}
	}
}

// TestSettleWritesHeldRecords: scan records held to be written later
// (PutScanRecords) are written by Settle, not left for the store's close,
// after the wait.
func TestSettleWritesHeldRecords(t *testing.T) {
	st := openTemp(t)
	h := create(t, st, Header{Title: "t"})
	if err := st.PutScanRecords(h.ID, map[uint64][]byte{1: []byte("found nothing")}); err != nil {
		t.Fatal(err)
	}
	st.scanCache.mu.Lock()
	held := len(st.scanCache.pending)
	st.scanCache.mu.Unlock()
	if held == 0 {
		t.Fatal("fixture: the record was written at once")
	}
	if _, err := st.Settle(time.Minute); err != nil {
		t.Fatal(err)
	}
	st.scanCache.mu.Lock()
	defer st.scanCache.mu.Unlock()
	if len(st.scanCache.pending) != 0 || st.scanCache.done != nil {
		t.Fatalf("after Settle %d groups are held, a write under way: %v", len(st.scanCache.pending), st.scanCache.done != nil)
	}
}

// TestSettledImportLeavesNothingOwing: a store an import settled
// (OpenToImport, then Settle) and closed asks nothing of the next process
// to open it (Open). Its close has nothing left to flush, so it cannot add
// a table to the first level, nor (Badger's compactions running on while
// a store closes) merge that level into the next, over its size.
func TestSettledImportLeavesNothingOwing(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 30 MB of tables")
	}
	dir := t.TempDir()
	st, id := importShort(t, dir, 6)
	if ok, err := st.Settle(time.Minute); err != nil || !ok {
		t.Fatalf("Settle gave up within a minute (%v)", err)
	}
	settled := tablesByLevel(st)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = openAt(t, dir)
	if next := tablesByLevel(st); !slices.Equal(next, settled) {
		t.Errorf("tables by level: %v settled, %v once the store closed", settled, next)
	}
	if !st.settled() {
		t.Errorf("the store an import settled asks to be compacted when it is opened next: %+v", st.db.Levels())
	}
	if got, err := st.Get(id); err != nil || got.Count != 30000 {
		t.Errorf("%d messages after the store was opened again (%v), want 30000", got.Count, err)
	}
}

// importShort opens the store in dir to import and writes a session of
// rounds times 5,000 short messages into it, about 5 MB a round.
func importShort(t *testing.T, dir string, rounds int) (*Store, string) {
	t.Helper()
	st, err := OpenToImport(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, err := st.Create(Header{Title: "short messages"})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("a short line of a long session. ", 12)
	for round := range rounds {
		batch := make([]*Message, 0, 5000)
		for i := range cap(batch) {
			batch = append(batch, &Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: fmt.Sprintf("%d.%d %s", round, i, text)}}})
		}
		if err := st.AppendBulk(h.ID, batch); err != nil {
			t.Fatal(err)
		}
	}
	return st, h.ID
}

func tablesByLevel(st *Store) []int {
	var n []int
	for _, l := range st.db.Levels() {
		n = append(n, l.NumTables)
	}
	return n
}

// TestSettleReopenFailsClosed: when Badger cannot be opened again (here a
// table damaged on disk while the store was open), Settle says why, and
// Close returns the same error instead of closing Badger twice.
func TestSettleReopenFailsClosed(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 40 MB of tables")
	}
	dir := t.TempDir()
	st, _ := importShort(t, dir, 8)
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(tables) == 0 {
		t.Fatal("fixture: no table written before Settle")
	}
	f, err := os.OpenFile(tables[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	b := make([]byte, 1)
	f.ReadAt(b, fi.Size()/4) // in a data block: the index is at the end
	b[0] ^= 0x41
	f.WriteAt(b, fi.Size()/4)
	f.Close()
	_, err = st.Settle(time.Minute)
	if !errors.Is(err, ErrDamaged) {
		t.Fatalf("Settle with a table damaged: %v, want ErrDamaged", err)
	}
	if cerr := st.Close(); cerr != err {
		t.Errorf("Close after the failed reopen: %v, want %v", cerr, err)
	}
}
