package session

import "github.com/dgraph-io/badger/v4"

// AppendWithHeader appends msgs and changes the session header with fn in one
// durable transaction: either both happen or neither does. The runner uses it
// so that a model-switch event and the new last model can never disagree.
// fn may not change ID or Count; LastModel set by fn wins over the one Append
// would take from assistant messages.
func (s *Store) AppendWithHeader(id string, fn func(*Header), msgs ...*Message) error {
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
		old := h
		for _, m := range msgs {
			if m.Role == RoleAssistant && m.Model != "" {
				h.LastModel = m.Model
			}
		}
		if fn != nil {
			fn(&h)
		}
		h.ID = old.ID
		h.Count = old.Count + uint64(len(msgs))
		h.UpdatedAt = s.Now()
		return putHeader(txn, h, old.UpdatedAt)
	})
}
