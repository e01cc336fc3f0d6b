package session

import (
	"fmt"
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
	if !st.Settle(time.Minute) {
		t.Fatal("Settle gave up within a minute")
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
	st.Settle(time.Minute)
	st.scanCache.mu.Lock()
	defer st.scanCache.mu.Unlock()
	if len(st.scanCache.pending) != 0 || st.scanCache.done != nil {
		t.Fatalf("after Settle %d groups are held, a write under way: %v", len(st.scanCache.pending), st.scanCache.done != nil)
	}
}

// TestSettledImportLeavesNothingOwing: a store an import settled
// (OpenToImport, then Settle) and closed asks nothing of the next process
// to open it (Open), though the close flushed its last memtable into the
// first level, which the import had left one table short of merging.
func TestSettledImportLeavesNothingOwing(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 30 MB of tables")
	}
	// Badger's compactions run on while a closing store flushes its
	// memtable, and now and then merge the close's table at once: the
	// case is tried again until the close leaves it.
	for try := 0; ; try++ {
		if try == 8 {
			t.Fatal("fixture: every close merged the table it flushed")
		}
		st := settledImport(t)
		l0 := st.db.Levels()[0]
		if l0.NumTables != l0Tables {
			st.Close()
			continue
		}
		if !st.settled() {
			t.Fatalf("the store an import settled asks to be compacted when it is opened next: %+v", st.db.Levels())
		}
		st.Close()
		return
	}
}

// settledImport writes short messages into a store opened to import until,
// settled, its first level is one table short of the importer's bound,
// closes it, and opens it again as the TUI would.
func settledImport(t *testing.T) *Store {
	dir := t.TempDir()
	st, err := OpenToImport(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, err := st.Create(Header{Title: "short messages"})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("a short line of a long session. ", 12)
	for round := 0; ; round++ {
		if round == 60 {
			t.Fatal("fixture: the writes never left the first level one table short")
		}
		batch := make([]*Message, 0, 5000)
		for i := range cap(batch) {
			batch = append(batch, &Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: fmt.Sprintf("%d.%d %s", round, i, text)}}})
		}
		if err := st.AppendBulk(h.ID, batch); err != nil {
			t.Fatal(err)
		}
		if !st.Settle(time.Minute) {
			t.Fatal("Settle gave up within a minute")
		}
		if st.db.Levels()[0].NumTables == l0Tables-1 {
			break
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return openAt(t, dir)
}
