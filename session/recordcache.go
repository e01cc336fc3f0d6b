package session

import (
	"bytes"
	"encoding/binary"
	"errors"
	"sync"

	"github.com/dgraph-io/badger/v4"
)

// recordCache holds groups of scan records put but not yet written, and
// writes them in the background, many puts to one commit. Every commit of
// the store is synced (an Append that returned survives a crash), and while
// one is being synced Badger holds back every transaction that starts, so
// that it reads what was committed before it: a first count at a million
// messages puts the records of each of its thousand steps, and its two
// cores' steps spent 3.4 s of their 12.4 s waiting for those syncs, their
// own and each other's. Records are a cache, so one lost to a crash before
// it is written is only scanned again.
//
// A reader or writer of a group that is held here waits for it to be
// written first (settle): what was put is read back, and a put merges with
// what was put before.
type recordCache struct {
	mu      sync.Mutex
	pending map[string][]byte // group key → the group's value
	size    int               // bytes in pending
	// writing is what the write under way holds, done closed when it is
	// written; nil when none is under way.
	writing map[string][]byte
	done    chan struct{}
}

const (
	// recordFlush is how many bytes of records wait before they are
	// written: at a million messages, about ten commits instead of a
	// thousand.
	recordFlush = 1 << 20
	// recordHold is how many may wait while a write is under way before a
	// put waits for it.
	recordHold = 4 * recordFlush
)

// holdRecords takes groups (key → value) to write later.
func (s *Store) holdRecords(groups map[string][]byte) {
	c := &s.scanCache
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending == nil {
		c.pending = map[string][]byte{}
	}
	for k, v := range groups {
		c.size += len(v) - len(c.pending[k])
		c.pending[k] = v
	}
	for c.size >= recordHold && c.done != nil {
		done := c.done
		c.mu.Unlock()
		<-done
		c.mu.Lock()
	}
	if c.size >= recordFlush && c.done == nil {
		s.writeRecords()
	}
}

// writeRecords starts writing what is pending. c.mu is held and no write is
// under way.
func (s *Store) writeRecords() {
	c := &s.scanCache
	groups, done := c.pending, make(chan struct{})
	c.writing, c.done, c.pending, c.size = groups, done, nil, 0
	go func() {
		_ = s.putGroups(groups) // a cache: what is lost is scanned again
		c.mu.Lock()
		c.writing, c.done = nil, nil
		c.mu.Unlock()
		close(done)
	}()
}

// settleRecords waits until no group of session id from lo to hi is held
// in the cache: those pending are written first.
func (s *Store) settleRecords(id string, lo, hi uint64) {
	c := &s.scanCache
	prefix := groupPrefix(id)
	holds := func(groups map[string][]byte) bool {
		for k := range groups {
			if len(k) == len(prefix)+8 && k[:len(prefix)] == string(prefix) {
				if g := binary.BigEndian.Uint64([]byte(k[len(prefix):])); lo <= g && g <= hi {
					return true
				}
			}
		}
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		var done chan struct{}
		switch {
		case holds(c.writing):
			done = c.done
		case holds(c.pending):
			if c.done == nil {
				s.writeRecords()
			}
			done = c.done
		default:
			return
		}
		c.mu.Unlock()
		<-done
		c.mu.Lock()
	}
}

// flushRecords writes everything the cache holds and waits for it (Close).
func (s *Store) flushRecords() {
	c := &s.scanCache
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.done != nil || len(c.pending) > 0 {
		if c.done == nil {
			s.writeRecords()
		}
		done := c.done
		c.mu.Unlock()
		<-done
		c.mu.Lock()
	}
}

// putGroups writes groups in as many transactions as it takes: a whole
// session's records at once are more than one may hold.
func (s *Store) putGroups(groups map[string][]byte) error {
	txn := s.db.NewTransaction(true)
	defer func() { txn.Discard() }()
	for k, v := range groups {
		err := txn.Set([]byte(k), v)
		if errors.Is(err, badger.ErrTxnTooBig) {
			if err = txn.Commit(); err != nil {
				return err
			}
			txn = s.db.NewTransaction(true)
			err = txn.Set([]byte(k), v)
		}
		if err != nil {
			return err
		}
	}
	return txn.Commit()
}

// mergeGroup is the value of group g of session id read in txn, with recs
// (by Seq, all of that group) in place of what it held for their messages.
func mergeGroup(txn *badger.Txn, id string, g uint64, seqs []uint64, recs map[uint64][]byte) ([]byte, error) {
	var kept [scanGroup][]byte
	if item, err := txn.Get(groupKey(id, g)); err == nil {
		err = item.Value(func(v []byte) error {
			return eachInGroup(v, func(at uint64, rec []byte) error {
				kept[at] = bytes.Clone(rec)
				return nil
			})
		})
		if err != nil && !errors.Is(err, errBadGroup) {
			return nil, err
		}
	} else if !errors.Is(err, badger.ErrKeyNotFound) {
		return nil, err
	}
	for _, seq := range seqs {
		kept[(seq-1)%scanGroup] = recs[seq]
	}
	return encodeGroup(&kept), nil
}
