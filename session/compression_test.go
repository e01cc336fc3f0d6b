package session

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dgraph-io/badger/v4"
	bopts "github.com/dgraph-io/badger/v4/options"
)

// TestCompressedTablesStillRead: stores written before 2026-12-01 have
// Snappy-compressed tables; scrim now writes them plain. Such a store must
// open (the tables are checked one by one before Badger opens them) and
// read as it was.
func TestCompressedTablesStillRead(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, dir)
	h := create(t, s, Header{Title: "old"})
	fill(t, s, h.ID, 300)
	want, _, err := s.Range(h.ID, 1, 300)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Rewrite every record through Badger with compression on: the flush
	// on close puts them all in a compressed table, as the old options did.
	db, err := badger.Open(options(dir).WithCompression(bopts.Snappy).WithBlockCacheSize(32 << 20)) // the old options, cache and all
	if err != nil {
		t.Fatal(err)
	}
	var kvs [][2][]byte
	err = db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			kvs = append(kvs, [2][]byte{it.Item().KeyCopy(nil), v})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wb := db.NewWriteBatch()
	for _, kv := range kvs {
		if err := wb.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := wb.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if !hasSnappyTable(t, dir) {
		t.Fatal("setup: no table of the store is compressed")
	}

	s = openAt(t, dir)
	got, bad, err := s.Range(h.ID, 1, 300)
	if err != nil || len(bad) > 0 {
		t.Fatalf("Range: %v, %d undecodable", err, len(bad))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %d messages, not the %d written", len(got), len(want))
	}
}

func hasSnappyTable(t *testing.T, dir string) bool {
	t.Helper()
	fp, err := os.Open(filepath.Join(dir, "MANIFEST"))
	if err != nil {
		t.Fatal(err)
	}
	defer fp.Close()
	opt := options(dir)
	mf, _, err := badger.ReplayManifestFile(fp, opt.ExternalMagicVersion, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range mf.Tables {
		if tm.Compression == bopts.Snappy {
			return true
		}
	}
	return false
}
