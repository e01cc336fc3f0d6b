package session

import (
	"fmt"
	"sync"
	"syscall"
)

// Badger writes its value log and memtable logs through memory-mapped
// files that it makes at their full size but leaves sparse. A write into a
// page the disk cannot back does not fail: the kernel kills the process
// with SIGBUS (an import onto a 40 MiB tmpfs died so, its store intact).
// So the store keeps count of what it is about to write, and before the
// disk could run short it asks the disk what is free, and refuses a write
// that could fault, with ENOSPC, which the commands turn into their
// "disk … is full" line. Nothing is lost: the write that is refused has not
// begun, and an import is one transaction.
// spaceEvery is how many bytes may be written between two looks at the
// disk: a look is a statfs, about a microsecond.
const spaceEvery = 256 << 10

// spaceReserve is what must stay free beyond a write itself, for a store
// whose memtables are of size mt: the memtables flushed to tables on close
// or when one fills (two of 8 MiB: 16 MiB, what FreeToOpen asks for too;
// more after a kill left a bigger memtable's log), and what is written
// between two looks. A compaction writes tables through maps too, and one
// of several big tables can want more than this: on a disk within a few
// tens of MiB of full that can still fault. Sessions' tables are small
// (1.6 MB for 20,000 messages), so it takes a very large store on a very
// full disk.
func spaceReserve(mt int64) uint64 { return 2*uint64(mt) + 2*spaceEvery }

// space accounts for what the store writes.
type space struct {
	mu        sync.Mutex
	unchecked int   // bytes written since the last look at the disk
	written   int64 // bytes written since the store opened
	free      uint64
	looked    bool
	reserve   uint64 // spaceReserve of the store's memtables
}

// room makes sure the disk can take n more bytes (and what Badger adds to
// them); it looks at the disk when spaceEvery bytes have gone by since it
// last did, or when the last look left little to spare.
func (s *Store) room(n int) error {
	sp := &s.space
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.unchecked += n
	sp.written += int64(n)
	if sp.looked && sp.unchecked < spaceEvery && sp.free >= sp.reserve+4*spaceEvery {
		return nil
	}
	free, ok := diskFree(s.dir)
	if !ok {
		return nil // a system that does not say: Badger's own errors, as before
	}
	sp.free, sp.looked, sp.unchecked = free, true, 0
	if need := uint64(n) + sp.reserve; free < need {
		return fullError(fmt.Sprintf("the disk holding session store %s is full (%s free, scrim needs %s to write safely): free some space, or pass --store DIR on another disk",
			s.dir, mib(free), mib(need)))
	}
	return nil
}

// fullError is a refused write: it says so in its own words, and is
// ENOSPC to whoever asks.
type fullError string

func (e fullError) Error() string { return string(e) }
func (e fullError) Unwrap() error { return syscall.ENOSPC }

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
