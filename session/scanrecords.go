package session

import (
	"bytes"
	"encoding/binary"
	"errors"
	"maps"
	"slices"

	"github.com/dgraph-io/badger/v4"
)

// Scan records are what another package computed from a message and keeps
// beside it (package secrets: the credentials found in it), so that the work
// is done once: as an import writes the message (ScanOnImport), or else the
// first time it is needed. The store does not read them: it drops them
// with their session, or with messages it removes. A record says itself
// what it was computed from (a rule set, a hash of the message), so a stale
// one is recognised by its reader, which then computes it again.
//
// They are kept scanGroup messages to a stored value: a key of its own for
// each message's record (13 bytes, most of them) made the first preview of
// a million-message session write a million keys, whose memtables and
// compactions were over 90 MB of its 221 MiB of anonymous memory. A group's
// value is, for each record in it, the message's place in the group and
// the record's length (uvarints), then the record.

// scanGroup is how many messages' records share a stored value.
const scanGroup = 256

func scanPrefix(id string) []byte { return []byte("f/" + id + "/") }

// scanKey is where a store kept one message's scan record before groups.
func scanKey(id string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(scanPrefix(id), seq)
}

// groupPrefix is where a session's groups are; the keys of one record a
// message, which the store wrote before, are under scanPrefix too, and go
// with it.
func groupPrefix(id string) []byte { return append(scanPrefix(id), 'g') }

func groupKey(id string, g uint64) []byte {
	return binary.BigEndian.AppendUint64(groupPrefix(id), g)
}

// groupOf is the group of the message with Seq seq (>= 1).
func groupOf(seq uint64) uint64 { return (max(seq, 1) - 1) / scanGroup }

// ScanRecords calls fn, in order of Seq, with each scan record of session id
// for Seqs from..to. fn must not keep v.
func (s *Store) ScanRecords(id string, from, to uint64, fn func(seq uint64, v []byte) error) error {
	if from > to {
		return nil
	}
	s.settleRecords(id, groupOf(from), groupOf(to))
	return s.db.View(func(txn *badger.Txn) error {
		prefix := groupPrefix(id)
		opts := badger.DefaultIteratorOptions
		opts.Prefix = prefix
		opts.PrefetchValues = false // each is read once, here
		it := txn.NewIterator(opts)
		defer it.Close()
		end := groupKey(id, groupOf(to))
		for it.Seek(groupKey(id, groupOf(from))); it.Valid(); it.Next() {
			item := it.Item()
			key := item.Key()
			if bytes.Compare(key, end) > 0 {
				return nil
			}
			g := binary.BigEndian.Uint64(key[len(prefix):])
			err := item.Value(func(v []byte) error {
				return eachInGroup(v, func(at uint64, rec []byte) error {
					if seq := g*scanGroup + at + 1; from <= seq && seq <= to {
						return fn(seq, rec)
					}
					return nil
				})
			})
			if err != nil && !errors.Is(err, errBadGroup) {
				return err
			}
		}
		return nil
	})
}

// errBadGroup is a group that does not decode: what it held is computed
// again.
var errBadGroup = errors.New("scan records: a damaged group")

// eachInGroup calls fn with each record of a group's value, in order, with
// its message's place in the group.
func eachInGroup(v []byte, fn func(at uint64, rec []byte) error) error {
	for len(v) > 0 {
		at, n := binary.Uvarint(v)
		if n <= 0 || at >= scanGroup {
			return errBadGroup
		}
		v = v[n:]
		size, n := binary.Uvarint(v)
		if n <= 0 || size > uint64(len(v)-n) {
			return errBadGroup
		}
		v = v[n:]
		if err := fn(at, v[:size]); err != nil {
			return err
		}
		v = v[size:]
	}
	return nil
}

// PutScanRecords keeps records beside messages of session id, by Seq, with
// those already kept for other messages of their groups. They are a cache:
// held and written with others in the background (recordCache), and one
// lost to a crash, or to another writer of the same group at the same
// moment, is computed again. Records of a session that no longer exists are
// not kept.
func (s *Store) PutScanRecords(id string, recs map[uint64][]byte) error {
	byGroup := map[uint64][]uint64{}
	for seq := range recs {
		byGroup[groupOf(seq)] = append(byGroup[groupOf(seq)], seq)
	}
	return s.holdGroups(id, slices.Collect(maps.Keys(byGroup)), func(txn *badger.Txn, g uint64) ([]byte, error) {
		return mergeGroup(txn, id, g, byGroup[g], recs)
	})
}

// holdGroups keeps groups gs of session id, each one's value made by value
// in a read of the store (merged there with what the group holds), held to
// be written in the background (holdRecords). A session that no longer
// exists keeps nothing, nor does an empty value.
func (s *Store) holdGroups(id string, gs []uint64, value func(txn *badger.Txn, g uint64) ([]byte, error)) error {
	if len(gs) == 0 {
		return nil
	}
	defer s.sessions.lock(id)()
	s.settleRecords(id, slices.Min(gs), slices.Max(gs))
	groups := make(map[string][]byte, len(gs))
	err := s.db.View(func(txn *badger.Txn) error {
		if _, err := txn.Get(headerKey(id)); err != nil {
			return nil // gone, or unreadable: nothing is kept
		}
		for _, g := range gs {
			v, err := value(txn, g)
			if err != nil {
				return err
			}
			if len(v) == 0 {
				continue
			}
			if err := s.room(len(v)); err != nil {
				return err // a cache: what is not kept is scanned again
			}
			groups[string(groupKey(id, g))] = v
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.holdRecords(groups)
	return nil
}
