package session

import (
	"errors"
	"fmt"
	"sync"

	"github.com/dgraph-io/badger/v4"

	"github.com/scrim-dev/scrim/internal/cores"
)

// fill sets the store-assigned fields of msgs, numbered after h.Count, and
// validates them. Nothing is written.
func (s *Store) fill(h Header, msgs []*Message) error {
	now := s.Now()
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
		for _, pt := range m.Parts {
			if pt.Redacted {
				return fmt.Errorf("message %d of %d holds a redaction placeholder; store the original, never a redacted copy", i+1, len(msgs))
			}
		}
		if err := m.Validate(); err != nil {
			return fmt.Errorf("message %d of %d: %w", i+1, len(msgs), err)
		}
	}
	return nil
}

// prepare fills in store-assigned fields and encodes msgs, numbered after
// h.Count.
func (s *Store) prepare(h Header, msgs []*Message) ([][]byte, error) {
	if err := s.fill(h, msgs); err != nil {
		return nil, err
	}
	vals := make([][]byte, len(msgs))
	for i, m := range msgs {
		b, err := encodeRecord(m)
		if err != nil {
			return nil, fmt.Errorf("encode message %d: %w", i+1, err)
		}
		vals[i] = b
	}
	return vals, nil
}

// advance moves h past msgs: count, updated time and last model.
func (s *Store) advance(h *Header, msgs []*Message) {
	h.Count += uint64(len(msgs))
	h.UpdatedAt = s.Now()
	for _, m := range msgs {
		if m.Role == RoleAssistant && m.Model != "" {
			h.LastModel = m.Model
		}
	}
}

// Append adds messages to a session in one durable transaction, assigning
// Seq (and ID, CreatedAt when empty) in place. All are written or none is;
// when Append returns nil they survive a crash. A message that breaks
// Validate fails the whole call. For thousands of messages use AppendBulk.
func (s *Store) Append(id string, msgs ...*Message) error {
	if len(msgs) == 0 {
		return nil
	}
	defer s.sessions.lock(id)()
	err := s.db.Update(func(txn *badger.Txn) error { return s.appendTxn(txn, id, nil, msgs) })
	if errors.Is(err, badger.ErrTxnTooBig) {
		return fmt.Errorf("append to session %s: %d messages are too big for one transaction; use AppendBulk", id, len(msgs))
	}
	return err
}

// AppendBulk adds many messages with write batches. They become visible only
// when the final header update commits: readers never look past the header's
// count, so a failure or crash before that leaves the session as it was (the
// unreferenced records are overwritten by the next append). Every message is
// validated before anything is written.
func (s *Store) AppendBulk(id string, msgs []*Message) error {
	if len(msgs) == 0 {
		return nil
	}
	defer s.sessions.lock(id)()
	h, err := s.Get(id)
	if err != nil {
		return err
	}
	if err := s.fill(h, msgs); err != nil {
		return err
	}
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	// Encoded a chunk at a time on every core while Badger writes the
	// previous one: the batch holds each value until its transaction
	// commits, but the whole import need not sit in memory twice.
	for start := 0; start < len(msgs); start += encodeChunk {
		chunk := msgs[start:min(start+encodeChunk, len(msgs))]
		vals, err := encodeAll(chunk, start)
		if err != nil {
			return err
		}
		for i, v := range vals {
			if err := s.room(len(v)); err != nil {
				return err
			}
			if err := wb.SetEntry(messageEntry(id, chunk[i], v)); err != nil {
				return fmt.Errorf("append to session %s: %w", id, err)
			}
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
		s.advance(&cur, msgs)
		return putHeader(txn, cur, old)
	})
}

const encodeChunk = 4096

// encodeAll marshals msgs (numbered from first in errors), splitting the
// work across cores when it is big enough to pay for the goroutines.
func encodeAll(msgs []*Message, first int) ([][]byte, error) {
	vals := make([][]byte, len(msgs))
	workers := min(cores.N(), 8, 1+len(msgs)/256)
	per := (len(msgs) + workers - 1) / workers
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w * per; i < min((w+1)*per, len(msgs)); i++ {
				v, err := encodeRecord(msgs[i])
				if err != nil {
					errs[w] = fmt.Errorf("encode message %d: %w", first+i+1, err)
					return
				}
				vals[i] = v
			}
		}()
	}
	wg.Wait()
	return vals, errors.Join(errs...)
}

// AppendWithHeader appends msgs and changes the session header with fn in one
// durable transaction: either both happen or neither does. The runner uses it
// so that a model-switch event and the new last model can never disagree.
// fn may not change ID or Count; LastModel set by fn wins over the one Append
// would take from assistant messages.
func (s *Store) AppendWithHeader(id string, fn func(*Header), msgs ...*Message) error {
	defer s.sessions.lock(id)()
	return s.db.Update(func(txn *badger.Txn) error { return s.appendTxn(txn, id, fn, msgs) })
}

// appendTxn writes msgs to session id in txn and advances its header, which
// fn (if not nil) may then change, all but its ID and Count.
func (s *Store) appendTxn(txn *badger.Txn, id string, fn func(*Header), msgs []*Message) error {
	h, err := getHeader(txn, id)
	if err != nil {
		return err
	}
	vals, err := s.prepare(h, msgs)
	if err != nil {
		return err
	}
	for i, v := range vals {
		if err := s.room(len(v)); err != nil {
			return err
		}
		if err := txn.SetEntry(messageEntry(id, msgs[i], v)); err != nil {
			return err
		}
	}
	old := h
	s.advance(&h, msgs)
	if fn != nil {
		fn(&h)
		h.ID, h.Count = old.ID, old.Count+uint64(len(msgs))
	}
	return putHeader(txn, h, old.UpdatedAt)
}
