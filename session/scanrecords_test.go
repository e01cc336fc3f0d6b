package session

import (
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
