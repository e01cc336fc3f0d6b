package session

import (
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Settle waits, up to most, for Badger to finish the compactions a big
// write left owing: tables over their level's size, or too many of them
// flushed and not yet merged. An import of a long session of short
// messages (a million of them: 450 MB of tables) leaves tens of megabytes
// to compact, and Badger does that in whichever process opens the store
// next, in the background: for the TUI, at its first start, beside its
// first count, whose memory and cores it shares (on the UI benchmark's
// session, 15-40 MB of table builders at its peak). Waiting at the end of
// the import does it while nothing else wants the machine. A process that
// wrote less than settleFrom does not wait: what it leaves is a memtable or
// two, and what is owing then is an earlier process's, which the
// compaction Badger starts at every open is already doing (an unchanged
// re-import of the 1,500-file tree waited 0.25 s for it, doubling its
// time). It reports whether the store is settled; if not by then, what is
// left is done later, as before.
//
// The last writes are still in Badger's memtable, which it flushes into
// the first level as it closes, and its compactions run on while it does:
// now and then they merged that level into the next as the store closed,
// which was then over its size, and the next process compacted it beside
// its first count (the UI benchmark's million-message session, as its
// generator left it: 9 MB of tables, 4.68-5.03 s for the first count on
// the store compacted before against 5.19-5.50, three pairs interleaved;
// scrolling in tmux meanwhile, 4 steps of scrim's own over 50 ms in about
// 17,400 against none in about 21,500).
// So once settled, Settle closes Badger, which flushes the memtable, opens
// it again and waits for what that close left: the store's own close then
// has nothing to flush. Nothing else may use the store meanwhile. An error
// is from closing or opening Badger again: the store is closed then (what
// was written is in Badger's files), and Close returns the error.
func (s *Store) Settle(most time.Duration) (bool, error) {
	// Scan records an import kept (ScanOnImport) go first: held in the
	// cache, they would be written as the store closes, after the wait.
	s.flushRecords()
	s.space.mu.Lock()
	written := s.space.written
	s.space.mu.Unlock()
	if written < settleFrom {
		return s.settled(), nil
	}
	deadline := time.Now().Add(most)
	if !s.settleBy(deadline) {
		return false, nil
	}
	err := s.db.Close()
	if err == nil {
		// Badger's own lock on the folder is a flock, which a child being
		// started holds a copy of for a moment: whileInUse waits that out.
		var db *badger.DB
		if db, err = whileInUse(func() (*badger.DB, error) { return openDB(s.dir, s.l0) }); err == nil {
			s.db = db
			return s.settleBy(deadline), nil
		}
	}
	s.closed(err)
	return false, err
}

// closed ends a store whose Badger is closed already: Close returns err.
func (s *Store) closed(err error) {
	s.closeOnce.Do(func() {
		s.closeErr = err
		s.lock.unlock()
	})
}

// settleBy waits until the store is settled, or deadline has passed.
func (s *Store) settleBy(deadline time.Time) bool {
	for !s.settled() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// settleFrom is how much a process writes before Settle waits: two
// memtables.
const settleFrom = 16 << 20

// settled reports whether no level of the store's tables asks to be
// compacted: a score of 1 or more (over its size, or for the first level,
// too many tables), or, for a level below the first, more than its target
// size. Badger gives a level that is being compacted no score, so a store
// whose compaction had only begun read as settled, and the next process to
// open it compacted tens of megabytes of tables beside its first count.
func (s *Store) settled() bool {
	for _, l := range s.db.Levels() {
		if l.Score >= 1 || l.Adjusted >= 1 || l.Level > 0 && l.Size > l.TargetSize {
			return false
		}
	}
	return true
}
