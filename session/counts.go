package session

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// Count records are figures another package computed over a session's first
// messages (package tally: what a trust tier is sent of it) and keeps beside
// the session so that reopening it costs a read, not a recount. Like scan
// records they are a cache the store does not read: it drops them with
// their session. A record says itself what it was computed from: the
// session's revision (Revision), how many messages, the policy's
// fingerprint; its reader recounts when any of those no longer holds.

func countPrefix(id string) []byte { return []byte("c/" + id + "/") }

func countKey(id, name string) []byte { return append(countPrefix(id), name...) }

// revisionKey holds how many times messages of a session already written
// were changed (not appended to): an import revising a message, a repair.
func revisionKey(id string) []byte { return []byte("r/" + id) }

// Revision is session id's revision: it changes whenever a message already
// stored changes, and never when messages are only appended. A figure
// computed over messages 1..n at revision r still holds while the revision
// is r and the session has at least n messages.
func (s *Store) Revision(id string) (uint64, error) {
	var rev uint64
	err := s.db.View(func(txn *badger.Txn) error {
		var err error
		rev, err = revisionIn(txn, id)
		return err
	})
	return rev, err
}

func revisionIn(txn *badger.Txn, id string) (uint64, error) {
	item, err := txn.Get(revisionKey(id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var rev uint64
	err = item.Value(func(v []byte) error {
		if len(v) == 8 {
			rev = binary.BigEndian.Uint64(v)
		}
		return nil
	})
	return rev, err
}

// bumpRevision marks, in txn, that messages of session id already stored
// changed.
func bumpRevision(txn *badger.Txn, id string) error {
	rev, err := revisionIn(txn, id)
	if err != nil {
		return err
	}
	return txn.Set(revisionKey(id), binary.BigEndian.AppendUint64(nil, rev+1))
}

// A count record longer than recordPiece is kept in pieces of that size:
// Badger copies each value it writes into a buffer of its own before the
// value log, and a first preview's gathering of a million-message session
// (18 MB) was held three times at the preview's peak, the record, that
// copy and the candidates it was made from. The record's own key then
// holds, marked piecesMeta, how many pieces and bytes there are.
//
// The buffer grows to twice the longest value written (bytes.Buffer): with
// pieces of 1 MiB it took 1 MiB of the 20,000-message benchmark session's
// first preview, at the moment its memory peaked (the record and the
// fingerprints beside it); 128 KiB pieces take an eighth of that.
var recordPiece = 128 << 10 // a variable for tests

// maxRecordPiece is the longest piece a record was ever kept in (1 MiB,
// before 2026-12-06): a record kept by an earlier scrim is read, and
// replaced whole, as one kept now.
const maxRecordPiece = 1 << 20

// maxPieces bounds the pieces a record's key may say it has: past it, the
// key is damaged (and the product of pieces and their size could wrap).
const maxPieces = 1 << 16

// piecesMeta is the user meta of a record's key whose value says where
// the record's pieces are (recordPieces).
const piecesMeta = 1

// pieceKey is the key of piece k of record name of session id: under the
// session's count prefix, apart from the records' own keys (a name never
// starts with a NUL byte).
func pieceKey(id, name string, k int) []byte {
	key := append(append(countPrefix(id), 0), name...)
	return binary.BigEndian.AppendUint32(append(key, 0), uint32(k))
}

// recordPieces reads how many pieces, and bytes in all, the record whose
// key's value is v is kept in, if it is at most most bytes; ok is false
// for a value no Put wrote. The pieces' lengths are not known here (they
// were longer once: maxRecordPiece): reading them checks that they add up.
func recordPieces(v []byte, most int) (n, size int, ok bool) {
	pieces, a := binary.Uvarint(v)
	total, b := binary.Uvarint(v[max(a, 0):])
	if a <= 0 || b <= 0 || a+b != len(v) || pieces == 0 || pieces > maxPieces || total < pieces || total > pieces*maxRecordPiece || total > uint64(most) {
		return 0, 0, false
	}
	return int(pieces), int(total), true
}

// CountRecord returns the count record name of session id. A record
// whose pieces do not add up (a cache, damaged) is not found.
func (s *Store) CountRecord(id, name string) (v []byte, ok bool, err error) {
	err = s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(countKey(id, name))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if item.UserMeta() != piecesMeta {
			v, err = item.ValueCopy(nil)
			ok = err == nil
			return err
		}
		var n, size int
		if err := item.Value(func(b []byte) error { n, size, ok = recordPieces(b, s.MaxCountRecord()); return nil }); err != nil || !ok {
			ok = false
			return err
		}
		v = make([]byte, 0, size)
		for k := range n {
			piece, err := txn.Get(pieceKey(id, name, k))
			if err == nil {
				err = piece.Value(func(b []byte) error { v = append(v, b...); return nil })
			}
			if err != nil || len(v) > size {
				v, ok = nil, false
				if errors.Is(err, badger.ErrKeyNotFound) {
					return nil
				}
				return err
			}
		}
		if len(v) != size {
			v, ok = nil, false
		}
		return nil
	})
	return v, ok, err
}

// PutCountRecord keeps a count record beside session id. It is a cache:
// not synced, and one lost to a crash is counted again. A record of a
// session that no longer exists is not kept.
func (s *Store) PutCountRecord(id, name string, v []byte) error {
	if len(v) > s.MaxCountRecord() {
		return fmt.Errorf("count record %s of session %s: %d bytes, more than the %d a record may hold", name, id, len(v), s.MaxCountRecord())
	}
	defer s.sessions.lock(id)()
	if err := s.room(len(v)); err != nil {
		return err
	}
	return s.db.Update(func(txn *badger.Txn) error {
		if _, err := txn.Get(headerKey(id)); err != nil {
			if errors.Is(err, badger.ErrKeyNotFound) {
				return nil
			}
			return err
		}
		// The pieces of the record this one replaces, past its own, go.
		was := 0
		if item, err := txn.Get(countKey(id, name)); err == nil && item.UserMeta() == piecesMeta {
			if err := item.Value(func(b []byte) error { was, _, _ = recordPieces(b, s.MaxCountRecord()); return nil }); err != nil {
				return err
			}
		} else if err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		n := 0
		if len(v) <= recordPiece {
			if err := txn.Set(countKey(id, name), v); err != nil {
				return err
			}
		} else {
			for at := 0; at < len(v); at += recordPiece {
				if err := txn.Set(pieceKey(id, name, n), v[at:min(at+recordPiece, len(v))]); err != nil {
					return err
				}
				n++
			}
			head := binary.AppendUvarint(binary.AppendUvarint(nil, uint64(n)), uint64(len(v)))
			if err := txn.SetEntry(badger.NewEntry(countKey(id, name), head).WithMeta(piecesMeta)); err != nil {
				return err
			}
		}
		for k := n; k < was; k++ {
			if err := txn.Delete(pieceKey(id, name, k)); err != nil {
				return err
			}
		}
		return nil
	})
}

// MaxCountRecord is the longest count record PutCountRecord takes: a
// cache, bounded as a value of Badger's value log is, which it once was
// whole.
func (s *Store) MaxCountRecord() int { return int(s.db.Opts().ValueLogFileSize) - 1<<16 }

// dropCounts removes a session's count records and revision.
func (s *Store) dropCounts(id string) error {
	if err := s.deletePrefix(countPrefix(id)); err != nil {
		return err
	}
	return s.db.Update(func(txn *badger.Txn) error { return txn.Delete(revisionKey(id)) })
}
