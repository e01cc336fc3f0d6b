package session

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// CleanImports removes what interrupted imports left: records of messages
// beyond their session's committed Count (all of them when the session has
// no header). Sessions that an import of this process is writing are left
// alone.
func (s *Store) CleanImports() error {
	var ids []string
	err := s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		opts.Prefix = []byte("i/")
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			ids = append(ids, strings.TrimPrefix(string(it.Item().Key()), "i/"))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("look for interrupted imports: %w", err)
	}
	for _, id := range ids {
		active.Lock()
		busy := active.ids[s.dir+"\x00"+id] > 0
		active.Unlock()
		if busy {
			continue
		}
		if err := s.cleanImport(id); err != nil {
			return fmt.Errorf("clean up interrupted import of session %s: %w", id, err)
		}
	}
	return nil
}

func (s *Store) cleanImport(id string) error {
	h, err := s.Get(id)
	var de DecodeError
	switch {
	case errors.Is(err, ErrNotFound):
		h.Count = 0
	case errors.As(err, &de):
		return nil // keep the records of a header we cannot read; never lose data
	case err != nil:
		return err
	}
	if err := s.deleteFrom(id, h.Count+1); err != nil {
		return err
	}
	return s.db.Update(func(txn *badger.Txn) error { return txn.Delete(markerKey(id)) })
}

// deleteFrom deletes session id's message records with Seq >= from, and
// their scan records.
func (s *Store) deleteFrom(id string, from uint64) error {
	s.settleRecords(id, groupOf(from), 1<<64-1) // or they would be written after
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	err := s.db.View(func(txn *badger.Txn) error {
		// The messages, the groups of scan records that hold theirs, and
		// the scan records a store kept a message each before groups.
		old := len(scanPrefix(id)) + 8
		for _, r := range []struct {
			prefix, from []byte
			keyLen       int // 0: any
		}{{msgPrefix(id), msgKey(id, from), 0}, {groupPrefix(id), groupKey(id, groupOf(from)), 0}, {scanPrefix(id), scanKey(id, from), old}} {
			opts := badger.DefaultIteratorOptions
			opts.PrefetchValues = false
			opts.Prefix = r.prefix
			it := txn.NewIterator(opts)
			for it.Seek(r.from); it.Valid(); it.Next() {
				if r.keyLen > 0 && len(it.Item().Key()) != r.keyLen {
					continue
				}
				if err := wb.Delete(it.Item().KeyCopy(nil)); err != nil {
					it.Close()
					return err
				}
			}
			it.Close()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return wb.Flush()
}
