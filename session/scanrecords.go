package session

import (
	"bytes"
	"encoding/binary"

	"github.com/dgraph-io/badger/v4"
)

// Scan records are what another package computed from a message and keeps
// beside it (package secrets: the credentials found in it), so that the work
// is done once, the first time it is needed, and never when the message is
// written. The store does not read them: it drops them with their session,
// or with messages it removes. A record says itself what it was computed
// from (a rule set, a hash of the message), so a stale one is recognised by
// its reader, which then computes it again.

func scanPrefix(id string) []byte { return []byte("f/" + id + "/") }

func scanKey(id string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(scanPrefix(id), seq)
}

// ScanRecords calls fn, in order of Seq, with each scan record of session id
// for Seqs from..to. fn must not keep v.
func (s *Store) ScanRecords(id string, from, to uint64, fn func(seq uint64, v []byte) error) error {
	return s.db.View(func(txn *badger.Txn) error {
		prefix := scanPrefix(id)
		opts := badger.DefaultIteratorOptions
		opts.Prefix = prefix
		opts.PrefetchValues = false
		it := txn.NewIterator(opts)
		defer it.Close()
		end := scanKey(id, to)
		for it.Seek(scanKey(id, from)); it.Valid(); it.Next() {
			item := it.Item()
			key := item.Key()
			if bytes.Compare(key, end) > 0 {
				return nil
			}
			seq := binary.BigEndian.Uint64(key[len(prefix):])
			if err := item.Value(func(v []byte) error { return fn(seq, v) }); err != nil {
				return err
			}
		}
		return nil
	})
}

// PutScanRecords keeps records beside messages of session id, by Seq. They
// are a cache: written in a batch, not synced, and one lost to a crash is
// computed again. Records of a session that no longer exists are not kept.
func (s *Store) PutScanRecords(id string, recs map[uint64][]byte) error {
	if len(recs) == 0 {
		return nil
	}
	defer s.sessions.lock(id)()
	var exists bool
	if err := s.db.View(func(txn *badger.Txn) error {
		_, err := txn.Get(headerKey(id))
		exists = err == nil
		return nil
	}); err != nil || !exists {
		return err
	}
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	for seq, v := range recs {
		if err := s.room(len(v)); err != nil {
			return err // a cache: what is not kept is scanned again
		}
		if err := wb.Set(scanKey(id, seq), v); err != nil {
			return err
		}
	}
	return wb.Flush()
}
