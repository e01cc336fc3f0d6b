package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Header describes a session without its messages.
type Header struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	LastModel string    `json:"lastModel,omitempty"`
	Count     uint64    `json:"messages"` // also the Seq of the last message
	Origin    string    `json:"origin,omitempty"`
	WorkDir   string    `json:"workDir,omitempty"` // where tools run
}

// DecodeError reports a stored record that could not be decoded; it is
// skipped, never fatal.
type DecodeError struct {
	SessionID string
	Seq       uint64 // 0 for a session header
	Err       error
}

func (e DecodeError) Error() string {
	if e.Seq == 0 {
		return fmt.Sprintf("session %s: header cannot be decoded: %v", e.SessionID, e.Err)
	}
	if errors.Is(e.Err, ErrMissing) {
		return fmt.Sprintf("session %s message %d: %v", e.SessionID, e.Seq, e.Err)
	}
	return fmt.Sprintf("session %s message %d cannot be decoded: %v", e.SessionID, e.Seq, e.Err)
}

func (e DecodeError) Unwrap() error { return e.Err }

// Create stores a new session header. ID and CreatedAt are filled in when
// empty; a given ID must satisfy ValidID.
func (s *Store) Create(h Header) (Header, error) {
	if h.ID == "" {
		h.ID = NewID()
	}
	if !ValidID(h.ID) {
		return h, fmt.Errorf("session ID %q must be 1–128 letters, digits, '.', '_' or '-'", h.ID)
	}
	defer s.sessions.lock(h.ID)()
	if err := s.finishDelete(h.ID); err != nil {
		return h, err
	}
	now := s.Now()
	if h.CreatedAt.IsZero() {
		h.CreatedAt = now
	}
	h.UpdatedAt = now
	h.Count = 0
	err := s.db.Update(func(txn *badger.Txn) error {
		_, err := txn.Get(headerKey(h.ID))
		switch {
		case err == nil:
			return fmt.Errorf("session %s already exists", h.ID)
		case !errors.Is(err, badger.ErrKeyNotFound):
			return err
		}
		return putHeader(txn, h, time.Time{})
	})
	s.links.changed(h.ID)
	return h, err
}

// putHeader writes h and moves its recency index entry from oldUpdated.
func putHeader(txn *badger.Txn, h Header, oldUpdated time.Time) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if !oldUpdated.IsZero() && !oldUpdated.Equal(h.UpdatedAt) {
		if err := txn.Delete(recencyKey(oldUpdated, h.ID)); err != nil {
			return err
		}
	}
	if err := txn.Set(headerKey(h.ID), b); err != nil {
		return err
	}
	return txn.Set(recencyKey(h.UpdatedAt, h.ID), nil)
}

func getHeader(txn *badger.Txn, id string) (Header, error) {
	var h Header
	item, err := txn.Get(headerKey(id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return h, fmt.Errorf("session %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return h, err
	}
	return h, checkedValue(item, func(v []byte) error { return decodeHeader(id, v, &h) })
}

func decodeHeader(id string, v []byte, h *Header) error {
	if err := unmarshalHeader(v, h); err != nil {
		return DecodeError{SessionID: id, Err: err}
	}
	if h.ID != id {
		return DecodeError{SessionID: id, Err: fmt.Errorf("header names session %q", h.ID)}
	}
	return nil
}

// Get returns a session's header.
func (s *Store) Get(id string) (Header, error) {
	var h Header
	err := s.db.View(func(txn *badger.Txn) error {
		var err error
		h, err = getHeader(txn, id)
		return err
	})
	return h, err
}

// Update changes a session's header in one transaction; ID and Count cannot change.
func (s *Store) Update(id string, fn func(*Header)) (Header, error) {
	return s.update(id, fn, true)
}

// update is Update; touch false keeps UpdatedAt (and the session's place in
// the recency order) as it was.
func (s *Store) update(id string, fn func(*Header), touch bool) (Header, error) {
	defer s.sessions.lock(id)()
	var h Header
	err := s.db.Update(func(txn *badger.Txn) error {
		old, err := getHeader(txn, id)
		if err != nil {
			return err
		}
		h = old
		fn(&h)
		h.ID, h.Count = old.ID, old.Count
		h.UpdatedAt = old.UpdatedAt
		if touch {
			h.UpdatedAt = s.Now()
		}
		return putHeader(txn, h, old.UpdatedAt)
	})
	return h, err
}

// Rename sets a session's title. A title is not activity: the session
// keeps its "updated" time and its place in the list.
func (s *Store) Rename(id, title string) error {
	_, err := s.update(id, func(h *Header) { h.Title = title }, false)
	return err
}

// Resolve turns a full ID or a unique prefix of one into the full ID, as git
// does for commits. A full ID wins even when it prefixes another ID.
func (s *Store) Resolve(prefix string) (string, error) {
	if prefix == "" {
		return "", lookupError{"empty session ID (list them with: scrim sessions)", ErrNotFound}
	}
	var matches []string
	err := s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		opts.Prefix = headerKey(prefix)
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid() && len(matches) < 6; it.Next() {
			matches = append(matches, string(it.Item().Key()[len("s/"):]))
		}
		return nil
	})
	switch {
	case err != nil:
		return "", err
	case len(matches) == 0:
		return "", lookupError{fmt.Sprintf("no session matches %q (list them with: scrim sessions)", prefix), ErrNotFound}
	case matches[0] == prefix || len(matches) == 1:
		return matches[0], nil
	}
	shown := strings.Join(matches[:min(len(matches), 5)], ", ")
	if len(matches) > 5 {
		shown += ", …"
	}
	return "", lookupError{fmt.Sprintf("%q matches sessions %s; give more of the ID", prefix, shown), ErrAmbiguous}
}

// lookupError reads as a sentence for people and matches its sentinel for code.
type lookupError struct {
	msg  string
	kind error
}

func (e lookupError) Error() string { return e.msg }
func (e lookupError) Unwrap() error { return e.kind }

// List returns all session headers, most recently updated first (ties by
// ID), and the headers that could not be decoded (skipped). It reads the
// headers themselves, so a stale or missing recency entry cannot hide or
// duplicate a session.
func (s *Store) List() ([]Header, []DecodeError, error) {
	var out []Header
	var bad []DecodeError
	err := s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = []byte("s/")
		opts.PrefetchValues = false // headers are small and read in place
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			id := string(item.Key()[len("s/"):])
			var h Header
			err := s.value(item, func(v []byte) error { return decodeHeader(id, v, &h) })
			var de DecodeError
			switch {
			case errors.As(err, &de):
				bad = append(bad, de)
			case err != nil:
				return err
			default:
				out = append(out, h)
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b Header) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, bad, err
}

// Delete removes a session and every key it owns. The header, its recency
// entries and a "deleting" marker change in one transaction, so the session
// disappears at once; its messages (too many for one transaction in a long
// session) follow in write batches, and a delete cut short by a crash is
// finished at the next Open.
func (s *Store) Delete(id string) error {
	defer s.sessions.lock(id)()
	defer s.links.changed(id)
	err := s.db.Update(func(txn *badger.Txn) error {
		if _, err := txn.Get(headerKey(id)); err != nil {
			if errors.Is(err, badger.ErrKeyNotFound) {
				return fmt.Errorf("session %s: %w", id, ErrNotFound)
			}
			return err
		}
		// Every index entry of id, found by key: an undecodable header does
		// not say which entry is its own.
		for _, k := range recencyKeysOf(txn, id) {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		if err := txn.Set(deletingKey(id), nil); err != nil {
			return err
		}
		return txn.Delete(headerKey(id))
	})
	if err != nil {
		return err
	}
	if err := s.finishDelete(id); err != nil {
		return err
	}
	s.reclaim()
	return nil
}

// reclaim asks Badger to rewrite value-log files that are mostly garbage,
// such as deleted sessions' tool results. Best effort: Badger learns what is
// garbage during compactions, so space freed by one delete may come back at
// a later one.
func (s *Store) reclaim() {
	for range 4 {
		if s.db.RunValueLogGC(0.5) != nil {
			return
		}
	}
}

func recencyKeysOf(txn *badger.Txn, id string) [][]byte {
	var keys [][]byte
	opts := badger.DefaultIteratorOptions
	opts.PrefetchValues = false
	opts.Prefix = []byte("u/")
	it := txn.NewIterator(opts)
	defer it.Close()
	suffix := []byte("/" + id)
	for it.Rewind(); it.Valid(); it.Next() {
		k := it.Item().Key()
		if len(k) == len("u/")+8+len(suffix) && bytes.HasSuffix(k, suffix) {
			keys = append(keys, it.Item().KeyCopy(nil))
		}
	}
	return keys
}

// finishDelete removes the messages of a session marked as being deleted,
// then the mark. Without a mark it does nothing.
func (s *Store) finishDelete(id string) error {
	err := s.db.View(func(txn *badger.Txn) error {
		_, err := txn.Get(deletingKey(id))
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := s.deletePrefix(msgPrefix(id)); err != nil {
		return fmt.Errorf("delete messages of session %s: %w", id, err)
	}
	s.settleRecords(id, 0, 1<<64-1) // or they would be written after
	if err := s.deletePrefix(scanPrefix(id)); err != nil {
		return fmt.Errorf("delete scan records of session %s: %w", id, err)
	}
	if err := s.dropCounts(id); err != nil {
		return fmt.Errorf("delete count records of session %s: %w", id, err)
	}
	return s.db.Update(func(txn *badger.Txn) error { return txn.Delete(deletingKey(id)) })
}

// finishDeletes completes deletes interrupted by a crash.
func (s *Store) finishDeletes() error {
	var ids []string
	err := s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		opts.Prefix = []byte("d/")
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			ids = append(ids, string(it.Item().Key()[len("d/"):]))
		}
		return nil
	})
	for _, id := range ids {
		if err == nil {
			err = s.finishDelete(id)
		}
	}
	return err
}

// deleteChunk bounds the keys held in memory while deleting; tests lower it.
var deleteChunk = 10000

// deletePrefix deletes every key under prefix, reading keys in chunks so a
// session of any length needs bounded memory. Each chunk is read from
// after the last one's last key: read from the prefix again, a chunk first
// stepped over the deletions of every chunk before it (at a million
// messages, 100 chunks, 18 of the 23 s of scrim rm in the iterator). A
// last read from the prefix finds any key written behind the chunks
// meanwhile, and starts over from there.
func (s *Store) deletePrefix(prefix []byte) error {
	from := prefix
	for {
		var keys [][]byte
		err := s.db.View(func(txn *badger.Txn) error {
			opts := badger.DefaultIteratorOptions
			opts.PrefetchValues = false
			opts.Prefix = prefix
			it := txn.NewIterator(opts)
			defer it.Close()
			for it.Seek(from); it.Valid() && len(keys) < deleteChunk; it.Next() {
				keys = append(keys, it.Item().KeyCopy(nil))
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(keys) == 0 {
			if bytes.Equal(from, prefix) {
				return nil
			}
			from = prefix
			continue
		}
		wb := s.db.NewWriteBatch()
		for _, k := range keys {
			if err := wb.Delete(k); err != nil {
				wb.Cancel()
				return err
			}
		}
		if err := wb.Flush(); err != nil {
			return err
		}
		from = append(slices.Clip(keys[len(keys)-1]), 0) // the least key after it
	}
}
