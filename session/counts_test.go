package session

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// TestCountRecords: a count record is kept beside its session, the session's
// revision moves only when a stored message changes, and deleting the
// session drops both.
func TestCountRecords(t *testing.T) {
	s := openTest(t)
	h, err := s.Create(Header{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(h.ID, &Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutCountRecord(h.ID, "tier/x", []byte("figures")); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := s.CountRecord(h.ID, "tier/x"); err != nil || !ok || string(v) != "figures" {
		t.Fatalf("record %q %v %v", v, ok, err)
	}
	rev := func() uint64 {
		t.Helper()
		r, err := s.Revision(h.ID)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if err := s.Append(h.ID, &Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "more"}}}); err != nil {
		t.Fatal(err)
	}
	if r := rev(); r != 0 {
		t.Fatalf("an append moved the revision to %d", r)
	}
	b, err := s.BeginBulk()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Continue(h.ID); err != nil {
		t.Fatal(err)
	}
	b.Revise(h.ID, 1, func(m *Message) { m.Parts[0].Text = "hello" })
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if r := rev(); r != 1 {
		t.Fatalf("a revised message left the revision at %d", r)
	}
	if err := s.Delete(h.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.CountRecord(h.ID, "tier/x"); ok {
		t.Fatal("the count record outlives its session")
	}
	if r := rev(); r != 0 {
		t.Fatalf("the revision outlives its session: %d", r)
	}
	if err := s.PutCountRecord(h.ID, "tier/x", []byte("late")); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.CountRecord(h.ID, "tier/x"); ok {
		t.Fatal("a record is kept for a session that no longer exists")
	}
}

// TestCountRecordTooLong: a record of MaxCountRecord bytes is kept; a
// longer one is refused with an error before Badger sees it, and the one
// kept before stays.
func TestCountRecordTooLong(t *testing.T) {
	s := openTemp(t)
	h := create(t, s, Header{Title: "t"})
	if err := s.PutCountRecord(h.ID, "gathered/x", make([]byte, s.MaxCountRecord())); err != nil {
		t.Fatalf("a record of MaxCountRecord bytes: %v", err)
	}
	if err := s.PutCountRecord(h.ID, "gathered/x", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutCountRecord(h.ID, "gathered/x", make([]byte, s.MaxCountRecord()+1)); err == nil {
		t.Fatal("a record past MaxCountRecord was taken")
	}
	if v, ok, err := s.CountRecord(h.ID, "gathered/x"); err != nil || !ok || string(v) != "kept" {
		t.Fatalf("after the refusal: %q %v %v", v, ok, err)
	}
}

// TestCountRecordInPieces: a record longer than a piece is kept in pieces
// and read back whole; one that replaces it, shorter or longer, leaves no
// piece of it behind to be read; a missing piece makes the record not
// found (a cache, recounted), never a shorter one; deleting the session
// drops every piece.
func TestCountRecordInPieces(t *testing.T) {
	defer func(n int) { recordPiece = n }(recordPiece)
	recordPiece = 4 << 10
	s := openTemp(t)
	h := create(t, s, Header{Title: "t"})
	record := func(n int, seed byte) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = seed + byte(i*7+i/4096)
		}
		return b
	}
	for _, c := range []struct {
		n    int
		seed byte
	}{{5*recordPiece + 17, 1}, {recordPiece, 2}, {3 * recordPiece, 3}, {2*recordPiece + 1, 4}, {9, 5}, {7*recordPiece - 1, 6}} {
		want := record(c.n, c.seed)
		if err := s.PutCountRecord(h.ID, "gathered/x", want); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := s.CountRecord(h.ID, "gathered/x"); err != nil || !ok || !bytes.Equal(got, want) {
			t.Fatalf("a record of %d bytes read back as %d bytes, %v %v", c.n, len(got), ok, err)
		}
		if pieces := countKeys(t, s, h.ID) - 1; pieces != (c.n+recordPiece-1)/recordPiece*boolInt(c.n > recordPiece) {
			t.Fatalf("a record of %d bytes: %d pieces stored", c.n, pieces)
		}
	}
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Delete(pieceKey(h.ID, "gathered/x", 3)) }); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.CountRecord(h.ID, "gathered/x"); err != nil || ok || got != nil {
		t.Fatalf("a record missing a piece read as %d bytes, %v %v", len(got), ok, err)
	}
	// A damaged key is not found, and nothing is made room for.
	damaged := func(what string, pieces, total uint64) {
		t.Helper()
		head := binary.AppendUvarint(binary.AppendUvarint(nil, pieces), total)
		if err := s.db.Update(func(txn *badger.Txn) error {
			return txn.SetEntry(badger.NewEntry(countKey(h.ID, "gathered/x"), head).WithMeta(piecesMeta))
		}); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := s.CountRecord(h.ID, "gathered/x"); err != nil || ok || got != nil {
			t.Fatalf("a key saying %s read as %d bytes, %v %v", what, len(got), ok, err)
		}
	}
	// More pieces than any record has, whose number times a piece's size
	// wraps around to say 4 TiB in all.
	damaged("4 TiB", 1<<52+1<<30, 1<<42)
	// No more than its pieces could hold, but more than any record may
	// (maxPieces pieces of maxRecordPiece: 64 GiB).
	damaged("64 GiB", maxPieces, maxPieces*maxRecordPiece)
	// A record an earlier scrim kept, in longer pieces than now: read
	// back whole, and replaced by a shorter one without a piece left.
	old := record(3*maxRecordPiece+5, 8)
	before := countKeys(t, s, h.ID) + 1 // and gathered/y's own key
	if err := s.db.Update(func(txn *badger.Txn) error {
		n := 0
		for at := 0; at < len(old); at += maxRecordPiece {
			if err := txn.Set(pieceKey(h.ID, "gathered/y", n), old[at:min(at+maxRecordPiece, len(old))]); err != nil {
				return err
			}
			n++
		}
		head := binary.AppendUvarint(binary.AppendUvarint(nil, uint64(n)), uint64(len(old)))
		return txn.SetEntry(badger.NewEntry(countKey(h.ID, "gathered/y"), head).WithMeta(piecesMeta))
	}); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.CountRecord(h.ID, "gathered/y"); err != nil || !ok || !bytes.Equal(got, old) {
		t.Fatalf("a record kept in %d-byte pieces read back as %d bytes, %v %v", maxRecordPiece, len(got), ok, err)
	}
	if err := s.PutCountRecord(h.ID, "gathered/y", record(2*recordPiece+3, 9)); err != nil {
		t.Fatal(err)
	}
	if pieces := countKeys(t, s, h.ID) - before; pieces != 3 {
		t.Fatalf("a record of 3 pieces replacing one of 4 longer ones: %d pieces stored", pieces)
	}
	if err := s.PutCountRecord(h.ID, "gathered/x", record(4*recordPiece, 7)); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(h.ID); err != nil {
		t.Fatal(err)
	}
	if n := countKeys(t, s, h.ID); n != 0 {
		t.Fatalf("%d keys of count records outlive their session", n)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// countKeys is how many keys session id's count records take.
func countKeys(t *testing.T, s *Store, id string) int {
	t.Helper()
	n := 0
	if err := s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues, opts.Prefix = false, countPrefix(id)
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}
