package session

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// SchemaVersion is the store layout this build writes and reads.
const SchemaVersion = 1

var (
	// ErrInUse: another process holds the store.
	ErrInUse = errors.New("in use by another scrim process")
	// ErrNotFound: no session with that ID or prefix.
	ErrNotFound = errors.New("no such session")
	// ErrAmbiguous: an ID prefix matches more than one session.
	ErrAmbiguous = errors.New("ambiguous session ID prefix")
	// ErrNewerSchema: the store was written by a newer scrim.
	ErrNewerSchema = errors.New("store written by a newer scrim")
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
	return fmt.Sprintf("session %s message %d cannot be decoded: %v", e.SessionID, e.Seq, e.Err)
}

// Store is the Badger-backed session store.
type Store struct {
	db  *badger.DB
	dir string
	// Now is the clock; tests may replace it.
	Now func() time.Time
}

var versionKey = []byte("v")

// Open opens (creating if needed) the store in dir. Badger never writes to the
// terminal: its logger is off.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create session store %s: %w", dir, err)
	}
	opts := badger.DefaultOptions(dir).
		WithLogger(nil).
		WithSyncWrites(true).
		WithMemTableSize(16 << 20).
		WithNumMemtables(2).
		WithBlockCacheSize(32 << 20).
		WithIndexCacheSize(16 << 20).
		WithValueThreshold(1 << 20). // 6% of the memtable: most messages live in the LSM tree
		WithValueLogFileSize(64 << 20).
		WithNumCompactors(2).
		WithNumLevelZeroTables(4).
		WithNumLevelZeroTablesStall(8)
	db, err := badger.Open(opts)
	if err != nil {
		if strings.Contains(err.Error(), "Cannot acquire directory lock") {
			return nil, fmt.Errorf("session store %s is %w", dir, ErrInUse)
		}
		return nil, fmt.Errorf("open session store %s: %w", dir, err)
	}
	s := &Store{db: db, dir: dir, Now: time.Now}
	if err := s.checkVersion(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) checkVersion() error {
	return s.db.Update(func(txn *badger.Txn) error {
		item, err := txn.Get(versionKey)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return txn.Set(versionKey, binary.BigEndian.AppendUint32(nil, SchemaVersion))
		}
		if err != nil {
			return fmt.Errorf("read session store %s version: %w", s.dir, err)
		}
		v, err := item.ValueCopy(nil)
		if err != nil || len(v) != 4 {
			return fmt.Errorf("session store %s has an unreadable version key; is it a scrim store?", s.dir)
		}
		if n := binary.BigEndian.Uint32(v); n > SchemaVersion {
			return fmt.Errorf("session store %s has schema %d but this scrim reads up to %d; upgrade scrim: %w", s.dir, n, SchemaVersion, ErrNewerSchema)
		}
		return nil
	})
}

// Dir is the store's folder.
func (s *Store) Dir() string { return s.dir }

// Close flushes and releases the store.
func (s *Store) Close() error { return s.db.Close() }

func headerKey(id string) []byte { return []byte("s/" + id) }

func msgPrefix(id string) []byte { return []byte("m/" + id + "/") }

func msgKey(id string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(msgPrefix(id), seq)
}

func recencyKey(t time.Time, id string) []byte {
	k := binary.BigEndian.AppendUint64([]byte("u/"), uint64(t.UnixNano()))
	return append(append(k, '/'), id...)
}

// NewID returns a fresh random session ID (16 hex digits).
func NewID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// Create stores a new session header. ID and CreatedAt are filled in when empty.
func (s *Store) Create(h Header) (Header, error) {
	if h.ID == "" {
		h.ID = NewID()
	}
	now := s.Now()
	if h.CreatedAt.IsZero() {
		h.CreatedAt = now
	}
	h.UpdatedAt = now
	h.Count = 0
	err := s.db.Update(func(txn *badger.Txn) error {
		if _, err := txn.Get(headerKey(h.ID)); err == nil {
			return fmt.Errorf("session %s already exists", h.ID)
		}
		return putHeader(txn, h, time.Time{})
	})
	return h, err
}

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
	err = item.Value(func(v []byte) error { return json.Unmarshal(v, &h) })
	if err != nil {
		return h, DecodeError{SessionID: id, Err: err}
	}
	return h, nil
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
	var h Header
	err := s.db.Update(func(txn *badger.Txn) error {
		old, err := getHeader(txn, id)
		if err != nil {
			return err
		}
		h = old
		fn(&h)
		h.ID, h.Count = old.ID, old.Count
		h.UpdatedAt = s.Now()
		return putHeader(txn, h, old.UpdatedAt)
	})
	return h, err
}

// Rename sets a session's title.
func (s *Store) Rename(id, title string) error {
	_, err := s.Update(id, func(h *Header) { h.Title = title })
	return err
}

// Resolve turns a full ID or a unique prefix of one into the full ID.
func (s *Store) Resolve(prefix string) (string, error) {
	if prefix == "" {
		return "", fmt.Errorf("empty session ID: %w", ErrNotFound)
	}
	var matches []string
	err := s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		opts.Prefix = headerKey(prefix)
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid() && len(matches) < 6; it.Next() {
			matches = append(matches, string(it.Item().Key()[2:]))
		}
		return nil
	})
	switch {
	case err != nil:
		return "", err
	case len(matches) == 0:
		return "", fmt.Errorf("no session matches %q (list them with: scrim sessions): %w", prefix, ErrNotFound)
	case len(matches) > 1:
		return "", fmt.Errorf("%q matches sessions %s; give more of the ID: %w", prefix, strings.Join(matches, ", "), ErrAmbiguous)
	}
	return matches[0], nil
}

// List returns all session headers, most recently updated first, and the
// headers that could not be decoded (skipped).
func (s *Store) List() ([]Header, []DecodeError, error) {
	var out []Header
	var bad []DecodeError
	err := s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Reverse = true
		opts.PrefetchValues = false
		opts.Prefix = []byte("u/")
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Seek([]byte("u/\xff")); it.Valid(); it.Next() {
			k := it.Item().Key()
			id := string(k[len("u/")+8+1:])
			h, err := getHeader(txn, id)
			var de DecodeError
			switch {
			case errors.As(err, &de):
				bad = append(bad, de)
			case errors.Is(err, ErrNotFound):
				// a stale index entry: the header is gone
			case err != nil:
				return err
			default:
				out = append(out, h)
			}
		}
		return nil
	})
	return out, bad, err
}

// Delete removes a session: its header and index entry in one transaction
// (the session disappears at once), then all its messages in one batch.
func (s *Store) Delete(id string) error {
	err := s.db.Update(func(txn *badger.Txn) error {
		h, err := getHeader(txn, id)
		var de DecodeError
		if err != nil && !errors.As(err, &de) {
			return err
		}
		if err == nil {
			if err := txn.Delete(recencyKey(h.UpdatedAt, id)); err != nil {
				return err
			}
		}
		return txn.Delete(headerKey(id))
	})
	if err != nil {
		return err
	}
	return s.deletePrefix(msgPrefix(id))
}

func (s *Store) deletePrefix(prefix []byte) error {
	var keys [][]byte
	err := s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		opts.Prefix = prefix
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			keys = append(keys, it.Item().KeyCopy(nil))
		}
		return nil
	})
	if err != nil || len(keys) == 0 {
		return err
	}
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	for _, k := range keys {
		if err := wb.Delete(k); err != nil {
			return err
		}
	}
	return wb.Flush()
}

// prepare fills in store-assigned fields and encodes msgs, numbered from next.
func (s *Store) prepare(h Header, msgs []*Message) ([][]byte, error) {
	now := s.Now()
	vals := make([][]byte, len(msgs))
	for i, m := range msgs {
		m.SessionID = h.ID
		m.Seq = h.Count + uint64(i) + 1
		if m.ID == "" {
			m.ID = fmt.Sprintf("%s-%d", h.ID, m.Seq)
		}
		if m.CreatedAt.IsZero() {
			m.CreatedAt = now
		}
		if m.Parts == nil {
			m.Parts = []Part{}
		}
		if err := m.Validate(); err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		b, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("encode message %d: %w", i, err)
		}
		vals[i] = b
	}
	return vals, nil
}

// Append adds messages to a session in one durable transaction, assigning
// Seq (and ID, CreatedAt when empty) in place. All are written or none is.
// For thousands of messages use AppendBulk.
func (s *Store) Append(id string, msgs ...*Message) error {
	return s.db.Update(func(txn *badger.Txn) error {
		h, err := getHeader(txn, id)
		if err != nil {
			return err
		}
		vals, err := s.prepare(h, msgs)
		if err != nil {
			return err
		}
		for i, v := range vals {
			if err := txn.Set(msgKey(id, msgs[i].Seq), v); err != nil {
				return err
			}
		}
		old := h.UpdatedAt
		h.Count += uint64(len(msgs))
		h.UpdatedAt = s.Now()
		for _, m := range msgs {
			if m.Role == RoleAssistant && m.Model != "" {
				h.LastModel = m.Model
			}
		}
		return putHeader(txn, h, old)
	})
}

// AppendBulk adds many messages with a write batch. Messages become visible
// only when the final header update commits: a crash before that leaves the
// session as it was (the unreferenced records are overwritten by the next
// append).
func (s *Store) AppendBulk(id string, msgs []*Message) error {
	h, err := s.Get(id)
	if err != nil {
		return err
	}
	vals, err := s.prepare(h, msgs)
	if err != nil {
		return err
	}
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	for i, v := range vals {
		if err := wb.Set(msgKey(id, msgs[i].Seq), v); err != nil {
			return fmt.Errorf("append to session %s: %w", id, err)
		}
	}
	if err := wb.Flush(); err != nil {
		return fmt.Errorf("append to session %s: %w", id, err)
	}
	return s.db.Update(func(txn *badger.Txn) error {
		cur, err := getHeader(txn, id)
		if err != nil {
			return err
		}
		if cur.Count != h.Count {
			return fmt.Errorf("session %s changed during a bulk append; retry", id)
		}
		old := cur.UpdatedAt
		cur.Count += uint64(len(msgs))
		cur.UpdatedAt = s.Now()
		for _, m := range msgs {
			if m.Role == RoleAssistant && m.Model != "" {
				cur.LastModel = m.Model
			}
		}
		return putHeader(txn, cur, old)
	})
}

// Messages loads all of a session's messages in order, plus the records that
// could not be decoded (skipped, never fatal).
func (s *Store) Messages(id string) ([]Message, []DecodeError, error) {
	return s.Range(id, 1, ^uint64(0))
}

// Range loads messages with from <= Seq <= to (clamped to the session).
func (s *Store) Range(id string, from, to uint64) ([]Message, []DecodeError, error) {
	var out []Message
	bad, err := s.Scan(id, from, to, func(m *Message) error {
		if out == nil {
			out = make([]Message, 0, 64)
		}
		out = append(out, *m)
		return nil
	})
	return out, bad, err
}

// Scan streams messages with from <= Seq <= to (clamped to the session) to fn
// without holding them all; fn must not keep m. Records that cannot be decoded
// are skipped and returned. An error from fn stops the scan and is returned.
func (s *Store) Scan(id string, from, to uint64, fn func(m *Message) error) ([]DecodeError, error) {
	var bad []DecodeError
	err := s.db.View(func(txn *badger.Txn) error {
		h, err := getHeader(txn, id)
		if err != nil {
			return err
		}
		if from < 1 {
			from = 1
		}
		if to > h.Count {
			to = h.Count
		}
		if from > to {
			return nil
		}
		opts := badger.DefaultIteratorOptions
		opts.Prefix = msgPrefix(id)
		opts.PrefetchSize = 256
		it := txn.NewIterator(opts)
		defer it.Close()
		end := msgKey(id, to)
		for it.Seek(msgKey(id, from)); it.Valid(); it.Next() {
			item := it.Item()
			if bytes.Compare(item.Key(), end) > 0 {
				break
			}
			seq := binary.BigEndian.Uint64(item.Key()[len(opts.Prefix):])
			var m Message
			if err := item.Value(func(v []byte) error { return json.Unmarshal(v, &m) }); err != nil {
				bad = append(bad, DecodeError{SessionID: id, Seq: seq, Err: err})
				continue
			}
			if err := fn(&m); err != nil {
				return err
			}
		}
		return nil
	})
	return bad, err
}
