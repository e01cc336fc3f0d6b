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

// CountRecord returns the count record name of session id.
func (s *Store) CountRecord(id, name string) (v []byte, ok bool, err error) {
	err = s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(countKey(id, name))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		v, err = item.ValueCopy(nil)
		ok = err == nil
		return err
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
		return txn.Set(countKey(id, name), v)
	})
}

// MaxCountRecord is the longest count record PutCountRecord takes: Badger
// writes a value whole into one file of its value log, and refuses a longer
// one.
func (s *Store) MaxCountRecord() int { return int(s.db.Opts().ValueLogFileSize) - 1<<16 }

// dropCounts removes a session's count records and revision.
func (s *Store) dropCounts(id string) error {
	if err := s.deletePrefix(countPrefix(id)); err != nil {
		return err
	}
	return s.db.Update(func(txn *badger.Txn) error { return txn.Delete(revisionKey(id)) })
}
