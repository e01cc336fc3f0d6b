package session

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// Messages loads all of a session's messages in order, plus the records that
// could not be decoded (skipped, never fatal).
func (s *Store) Messages(id string) ([]Message, []DecodeError, error) {
	return s.Range(id, 1, ^uint64(0))
}

// Range loads messages with from <= Seq <= to (clamped to the session).
func (s *Store) Range(id string, from, to uint64) ([]Message, []DecodeError, error) {
	var out []Message
	bad, err := s.scan(id, from, to, func(n uint64) { out = make([]Message, 0, n) }, func(m *Message) error {
		out = append(out, *m)
		return nil
	})
	return out, bad, err
}

// Scan streams messages with from <= Seq <= to (clamped to the session) to fn
// without holding them all; fn must not keep m. Records that cannot be decoded
// are skipped and returned. An error from fn stops the scan and is returned.
func (s *Store) Scan(id string, from, to uint64, fn func(m *Message) error) ([]DecodeError, error) {
	return s.scan(id, from, to, nil, fn)
}

// scan reads one snapshot: the header's count bounds what is visible, so
// records written past it by an unfinished bulk append stay hidden. sized,
// when set, learns the number of messages expected.
func (s *Store) scan(id string, from, to uint64, sized func(uint64), fn func(m *Message) error) ([]DecodeError, error) {
	var bad []DecodeError
	err := s.db.View(func(txn *badger.Txn) error {
		h, err := getHeader(txn, id)
		if err != nil {
			return err
		}
		from = max(from, 1)
		to = min(to, h.Count)
		if from > to {
			return nil
		}
		if sized != nil {
			sized(to - from + 1)
		}
		prefix := msgPrefix(id)
		opts := badger.DefaultIteratorOptions
		opts.Prefix = prefix
		opts.PrefetchSize = 256
		it := txn.NewIterator(opts)
		defer it.Close()
		end := msgKey(id, to)
		next := from // the Seq expected next; a jump means records are missing
		for it.Seek(msgKey(id, from)); it.Valid(); it.Next() {
			item := it.Item()
			key := item.Key()
			if bytes.Compare(key, end) > 0 {
				break
			}
			seq := binary.BigEndian.Uint64(key[len(prefix):])
			if seq > next {
				bad = append(bad, missing(id, next, seq-1))
			}
			next = seq + 1
			var m Message
			if err := item.Value(func(v []byte) error { return decodeMessage(id, seq, v, &m) }); err != nil {
				bad = append(bad, DecodeError{SessionID: id, Seq: seq, Err: err})
				continue
			}
			if err := fn(&m); err != nil {
				return err
			}
		}
		if next <= to {
			bad = append(bad, missing(id, next, to))
		}
		return nil
	})
	return bad, err
}

func decodeMessage(id string, seq uint64, v []byte, m *Message) error {
	if err := json.Unmarshal(v, m); err != nil {
		return err
	}
	if m.Seq != seq || m.SessionID != id {
		return fmt.Errorf("record is for session %q message %d", m.SessionID, m.Seq)
	}
	return nil
}

func missing(id string, from, to uint64) DecodeError {
	err := ErrMissing
	if to > from {
		err = fmt.Errorf("%w (so are messages %d–%d)", ErrMissing, from+1, to)
	}
	return DecodeError{SessionID: id, Seq: from, Err: err}
}
