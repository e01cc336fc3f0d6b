package session

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// TestScanRecordsInGroups: records kept in groups read back by Seq, in
// order, within any range, across groups; a later write keeps the records
// of the group's other messages; a damaged group is read as none; and the
// records a store kept one message each before groups still go with the
// messages they are for.
func TestScanRecordsInGroups(t *testing.T) {
	s := openTemp(t)
	h := create(t, s, Header{Title: "t"})
	rec := func(seq uint64, round int) []byte { return fmt.Appendf(nil, "r%d-%d", seq, round) }
	first := map[uint64][]byte{}
	for seq := uint64(1); seq <= 700; seq += 2 {
		first[seq] = rec(seq, 1)
	}
	if err := s.PutScanRecords(h.ID, first); err != nil {
		t.Fatal(err)
	}
	second := map[uint64][]byte{}
	for seq := uint64(200); seq <= 600; seq++ { // over a group's bounds, odd ones again
		second[seq] = rec(seq, 2)
	}
	if err := s.PutScanRecords(h.ID, second); err != nil {
		t.Fatal(err)
	}
	want := func(seq uint64) []byte {
		if v, ok := second[seq]; ok {
			return v
		}
		return first[seq]
	}
	for _, r := range [][2]uint64{{1, 1000}, {250, 520}, {256, 257}, {513, 513}, {600, 601}} {
		var got []uint64
		err := s.ScanRecords(h.ID, r[0], r[1], func(seq uint64, v []byte) error {
			if string(v) != string(want(seq)) {
				t.Errorf("record %d: %q, want %q", seq, v, want(seq))
			}
			got = append(got, seq)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var exp []uint64
		for seq := r[0]; seq <= r[1]; seq++ {
			if want(seq) != nil {
				exp = append(exp, seq)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(exp) {
			t.Fatalf("records %d-%d: Seqs %v, want %v", r[0], r[1], got, exp)
		}
	}

	// A damaged group holds nothing; the others still read.
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(groupKey(h.ID, 1), []byte{0xff, 0xff}) }); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := s.ScanRecords(h.ID, 1, 1000, func(seq uint64, _ []byte) error {
		if groupOf(seq) == 1 {
			t.Fatalf("record %d read from a damaged group", seq)
		}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no record read beside a damaged group")
	}

	// Removing messages from Seq 300 on removes their records, new and
	// old, and keeps those of the messages before their group.
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(scanKey(h.ID, 400), []byte("old")) }); err != nil {
		t.Fatal(err)
	}
	if err := s.deleteFrom(h.ID, 300); err != nil {
		t.Fatal(err)
	}
	left := 0
	eachItem(t, s, scanPrefix(h.ID), func(*badger.Item) { left++ })
	if left != 1 { // group 0: Seqs 1-256
		t.Fatalf("%d keys of scan records left, want the one group before Seq 300's", left)
	}
}

// TestScanRecordsOfAWholeSession: the records of more groups than one
// transaction holds (a long session's, at once) are all kept.
func TestScanRecordsOfAWholeSession(t *testing.T) {
	s := openTemp(t)
	h := create(t, s, Header{Title: "t"})
	recs := map[uint64][]byte{}
	for seq := uint64(1); seq <= 20_000*scanGroup; seq += scanGroup {
		recs[seq] = []byte("a record of 13")
	}
	if err := s.PutScanRecords(h.ID, recs); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := s.ScanRecords(h.ID, 1, 1<<40, func(uint64, []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != len(recs) {
		t.Fatalf("%d records kept of %d", n, len(recs))
	}
}

// eachItem calls fn with every item of s under prefix, in order.
func eachItem(t *testing.T, s *Store, prefix []byte, fn func(*badger.Item)) {
	t.Helper()
	if err := s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = prefix
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			fn(it.Item())
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestScanRecordsHeldThenWritten: records put are held and written many
// puts to a commit (none is in Badger after a small put), yet every reader
// sees them at once; Close writes what is held; a session deleted or cut
// back while its records are held loses them, and they are not written
// after it.
func TestScanRecordsHeldThenWritten(t *testing.T) {
	s := openTemp(t)
	h := create(t, s, Header{Title: "t"})
	inBadger := func() int {
		n := 0
		eachItem(t, s, groupPrefix(h.ID), func(*badger.Item) { n++ })
		return n
	}
	put := func(from, to uint64, round int) {
		t.Helper()
		recs := map[uint64][]byte{}
		for seq := from; seq <= to; seq++ {
			recs[seq] = fmt.Appendf(nil, "r%d-%d", seq, round)
		}
		if err := s.PutScanRecords(h.ID, recs); err != nil {
			t.Fatal(err)
		}
	}
	read := func(from, to uint64) map[uint64]string {
		t.Helper()
		got := map[uint64]string{}
		if err := s.ScanRecords(h.ID, from, to, func(seq uint64, v []byte) error {
			got[seq] = string(v)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}

	put(1, 256, 1)   // group 0
	put(257, 600, 1) // groups 1 and 2
	if n := inBadger(); n != 0 {
		t.Fatalf("%d groups written by two small puts; they should be held", n)
	}
	// A put over held groups merges with them.
	put(250, 260, 2)
	if got := read(1, 600); len(got) != 600 || got[1] != "r1-1" || got[255] != "r255-2" || got[600] != "r600-1" {
		t.Fatalf("read back %d records: 1=%q 255=%q 600=%q", len(got), got[1], got[255], got[600])
	}
	if n := inBadger(); n != 3 {
		t.Fatalf("%d groups in Badger after reading the held ones, want 3", n)
	}

	// More than recordFlush bytes are written without a reader asking.
	big := bytes.Repeat([]byte("x"), 1000)
	recs := map[uint64][]byte{}
	for seq := uint64(1001); seq <= uint64(1000+2*recordFlush/len(big)); seq++ {
		recs[seq] = big
	}
	if err := s.PutScanRecords(h.ID, recs); err != nil {
		t.Fatal(err)
	}
	s.scanCache.mu.Lock()
	held := s.scanCache.size
	s.scanCache.mu.Unlock()
	if held >= recordFlush {
		t.Fatalf("%d bytes held after a put of %d: a write should have started", held, 2*recordFlush)
	}

	// Close writes what is held.
	put(700, 710, 3)
	s = reopen(t, s)
	if got := read(700, 710); len(got) != 11 || got[705] != "r705-3" {
		t.Fatalf("after Close and Open: %v", got)
	}

	// Held records of messages removed, or of a deleted session, are
	// never written after them.
	put(900, 950, 4)
	if err := s.deleteFrom(h.ID, 800); err != nil {
		t.Fatal(err)
	}
	if got := read(800, 2000); len(got) != 0 {
		t.Fatalf("%d records past a cut", len(got))
	}
	put(100, 120, 5)
	if err := s.Delete(h.ID); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	if n := inBadger(); n != 0 {
		t.Fatalf("%d groups of a deleted session", n)
	}
}
