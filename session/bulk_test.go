package session

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

func openTest(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// rawCount counts the stored records under prefix, visible or not.
func rawCount(t *testing.T, s *Store, prefix []byte) int {
	t.Helper()
	n := 0
	s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = prefix
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	return n
}

func text(s string) *Message {
	return &Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: s}}}
}

// crash forgets a Bulk as a killed process would: no Commit, no Cancel;
// its locks die with it.
func crash(s *Store, b *Bulk) {
	for _, id := range b.order {
		b.sessions[id].unlock()
	}
	active.Lock()
	for _, id := range b.order {
		delete(active.ids, s.dir+"\x00"+id)
	}
	active.Unlock()
}

func TestBulkIsInvisibleUntilCommit(t *testing.T) {
	s := openTest(t)
	b, err := s.BeginBulk()
	if err != nil {
		t.Fatal(err)
	}
	id, err := b.NewSession(Header{Title: "imported"})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 64<<10)
	for i := 0; i < 100; i++ { // 6 MiB: several write batches reach Badger
		if err := b.Add(id, text(big)); err != nil {
			t.Fatal(err)
		}
	}
	if hs, _, _ := s.List(); len(hs) != 0 {
		t.Fatalf("sessions visible before commit: %+v", hs)
	}
	if _, err := s.Get(id); err == nil {
		t.Fatal("header visible before commit")
	}
	if err := b.Commit(&Origin{File: "/t/a.jsonl", Agent: "test", Sessions: map[string]string{"": id}, Offset: 10, SHA256: "ab"}); err != nil {
		t.Fatal(err)
	}
	h, err := s.Get(id)
	if err != nil || h.Count != 100 || h.Title != "imported" {
		t.Fatalf("after commit: %+v %v", h, err)
	}
	msgs, _, _ := s.Messages(id)
	if len(msgs) != 100 || msgs[99].Seq != 100 || msgs[99].Text() != big {
		t.Fatalf("%d messages", len(msgs))
	}
	o, ok, err := s.Origin("/t/a.jsonl")
	if err != nil || !ok || o.Sessions[""] != id || o.Offset != 10 || o.ImportedAt.IsZero() {
		t.Fatalf("origin %+v %v %v", o, ok, err)
	}
	if n := rawCount(t, s, []byte("i/")); n != 0 {
		t.Errorf("%d import markers left", n)
	}
}

func TestCrashedImportLeavesNothingVisibleAndIsCleanedUp(t *testing.T) {
	s := openTest(t)
	old, _ := s.Create(Header{Title: "grown"})
	s.Append(old.ID, text("one"), text("two"))

	b, _ := s.BeginBulk()
	fresh, _ := b.NewSession(Header{Title: "half"})
	b.Continue(old.ID)
	for i := 0; i < 40; i++ {
		b.Add(fresh, text(strings.Repeat("y", 100<<10)))
		b.Add(old.ID, text("more"))
	}
	b.Revise(old.ID, 1, func(m *Message) { m.Meta.Note = "revised" })
	crash(s, b)

	if _, err := s.Get(fresh); err == nil {
		t.Error("the crashed import's new session is visible")
	}
	msgs, _, _ := s.Messages(old.ID)
	if len(msgs) != 2 || msgs[0].Meta.Note != "" {
		t.Errorf("continued session shows %d messages (note %q), want its 2 old ones", len(msgs), msgs[0].Meta.Note)
	}
	if rawCount(t, s, msgPrefix(fresh)) == 0 {
		t.Fatal("test did not leave orphan records")
	}
	// An import run cleans up once before its first Bulk.
	if err := s.CleanImports(); err != nil {
		t.Fatal(err)
	}
	if n := rawCount(t, s, msgPrefix(fresh)); n != 0 {
		t.Errorf("%d orphan records of the new session left", n)
	}
	if n := rawCount(t, s, msgPrefix(old.ID)); n != 2 {
		t.Errorf("continued session has %d records, want 2", n)
	}
	if n := rawCount(t, s, []byte("i/")); n != 0 {
		t.Errorf("%d import markers left", n)
	}
}

func TestBulkReviseReplaceAndChecks(t *testing.T) {
	s := openTest(t)
	old, _ := s.Create(Header{Title: "old"})
	s.Append(old.ID, text("a"))
	gone, _ := s.Create(Header{Title: "gone"})
	s.Append(gone.ID, text("b"))

	b, _ := s.BeginBulk()
	b.Continue(old.ID)
	b.Add(old.ID, text("c"))
	b.Revise(old.ID, 1, func(m *Message) { m.Meta.Note = "revised" })
	b.EditHeader(old.ID, func(h *Header) { h.Title = "renamed" })
	if err := b.Replace(gone.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	msgs, _, _ := s.Messages(old.ID)
	if len(msgs) != 2 || msgs[0].Meta.Note != "revised" || msgs[1].Text() != "c" {
		t.Fatalf("%+v", msgs)
	}
	if h, _ := s.Get(old.ID); h.Title != "renamed" || h.Count != 2 {
		t.Errorf("header %+v", h)
	}
	if _, err := s.Get(gone.ID); err == nil || rawCount(t, s, msgPrefix(gone.ID)) != 0 {
		t.Error("replaced session still there")
	}

	t.Run("a hole is refused", func(t *testing.T) {
		b, _ := s.BeginBulk()
		id, _ := b.NewSession(Header{})
		b.Reserve(id)
		if err := b.Commit(nil); err == nil || !strings.Contains(err.Error(), "reserved") {
			t.Errorf("commit with a hole: %v", err)
		}
	})
	t.Run("an append waits for the import", func(t *testing.T) {
		b, _ := s.BeginBulk()
		b.Continue(old.ID)
		b.Add(old.ID, text("d"))
		appended := make(chan error)
		go func() { appended <- s.Append(old.ID, text("after")) }()
		select {
		case err := <-appended:
			t.Fatalf("Append ran during the import: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		if err := b.Commit(nil); err != nil {
			t.Fatal(err)
		}
		if err := <-appended; err != nil {
			t.Fatal(err)
		}
		msgs, _, _ := s.Messages(old.ID)
		if n := len(msgs); n != 4 || msgs[2].Text() != "d" || msgs[3].Text() != "after" {
			t.Errorf("%d messages, last %q", n, msgs[n-1].Text())
		}
	})
}

// A Group commits small imports in one transaction: none is visible before
// it commits, all are after, a cancelled one never is, and a big one (it
// streamed) commits at once on its own.
func TestGroupCommitsSmallImportsTogether(t *testing.T) {
	s := openTest(t)
	g := s.NewGroup()
	var ids []string
	for i := range 3 {
		b, _ := s.BeginBulk()
		id, _ := b.NewSession(Header{Title: fmt.Sprintf("small %d", i)})
		b.Add(id, text("hello"))
		waiting, err := g.Add(b, &Origin{File: fmt.Sprintf("/t/%d.jsonl", i), Agent: "claude"})
		if err != nil || !waiting {
			t.Fatalf("small import %d: waiting %v, %v", i, waiting, err)
		}
		b.Cancel() // as importFile's defer does: nothing for a grouped import
		ids = append(ids, id)
	}
	cancelled, _ := s.BeginBulk()
	gone, _ := cancelled.NewSession(Header{Title: "cancelled"})
	cancelled.Add(gone, text("never"))
	cancelled.Cancel()

	big, _ := s.BeginBulk()
	bigID, _ := big.NewSession(Header{Title: "big"})
	for range 12 {
		big.Add(bigID, text(strings.Repeat("z", 100<<10)))
	}
	if waiting, err := g.Add(big, &Origin{File: "/t/big.jsonl", Agent: "claude"}); err != nil || waiting {
		t.Fatalf("big import: waiting %v, %v", waiting, err)
	}
	if _, err := s.Get(bigID); err != nil {
		t.Fatalf("the big import is not visible at once: %v", err)
	}
	for _, id := range ids {
		if _, err := s.Get(id); err == nil {
			t.Fatal("a grouped import is visible before the group commits")
		}
	}
	if errs := g.Commit(); errs != nil {
		t.Fatal(errs)
	}
	for i, id := range ids {
		h, err := s.Get(id)
		if err != nil || h.Count != 1 {
			t.Fatalf("import %d after the group: %+v, %v", i, h, err)
		}
		if _, ok, _ := s.Origin(fmt.Sprintf("/t/%d.jsonl", i)); !ok {
			t.Fatalf("import %d has no origin record", i)
		}
	}
	if _, err := s.Get(gone); err == nil {
		t.Fatal("the cancelled import is visible")
	}
	if n := rawCount(t, s, []byte("i/")); n != 0 {
		t.Errorf("%d import markers left", n)
	}
	// The sessions are released: a writer can take them.
	if err := s.Append(ids[0], text("after")); err != nil {
		t.Fatal(err)
	}
}
