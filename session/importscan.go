package session

import (
	"bytes"
	"encoding/binary"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/dgraph-io/badger/v4"

	"github.com/scrim-dev/scrim/internal/cores"
)

// ScanOnImport has every import (Bulk) compute record(m), the scan record
// kept beside a message (PutScanRecords), for each message it writes, and
// keep what it returns (nil: nothing) once the import commits. The records
// are computed on goroutines of their own while the import goes on reading
// its transcript, which takes one core of a file: a long session's first
// preview or count then reads the credentials found in it (package
// secrets) instead of scanning every message (at a million messages, a
// quarter of the CPU of the TUI's counting steps). Call it before the
// store is used.
func (s *Store) ScanOnImport(record func(m *Message) []byte) { s.onImport = record }

// importScan is what an import's messages are scanned into: the records
// of each session the import writes, group by group (scanGroup), a group's
// records encoded as the store keeps them once all of its new messages
// are scanned. A pointer; its workers run until done.
type importScan struct {
	record func(m *Message) []byte
	jobs   chan *Message
	wg     sync.WaitGroup

	mu       sync.Mutex
	sessions map[string]*scannedSession
}

type scannedSession struct {
	first   uint64                   // the first Seq the import writes
	pending map[uint64]*scannedGroup // groups still being scanned
	groups  map[uint64][]byte        // groups whose new records are all in, encoded
}

type scannedGroup struct {
	recs [scanGroup][]byte
	n    int
}

// scanAhead is how many messages an import may hand to its scanners before
// one is done: the import's memory stays what it was, whatever the
// transcript's length.
const scanAhead = 32

func newImportScan(record func(m *Message) []byte) *importScan {
	sc := &importScan{record: record, jobs: make(chan *Message, scanAhead), sessions: map[string]*scannedSession{}}
	for range cores.N() {
		sc.wg.Go(func() {
			for m := range sc.jobs {
				sc.put(m.SessionID, m.Seq, sc.record(m))
			}
		})
	}
	return sc
}

// add scans m, a message of session id whose first new message is first,
// on a copy: the importer may reuse what m holds once Put returns.
func (sc *importScan) add(first uint64, m *Message) {
	sc.mu.Lock()
	if sc.sessions[m.SessionID] == nil {
		sc.sessions[m.SessionID] = &scannedSession{first: first, pending: map[uint64]*scannedGroup{}, groups: map[uint64][]byte{}}
	}
	sc.mu.Unlock()
	c := *m
	c.Parts = slices.Clone(m.Parts)
	for i := range c.Parts {
		c.Parts[i].Input = bytes.Clone(c.Parts[i].Input)
	}
	sc.jobs <- &c
}

// put files the record of message seq of session id.
func (sc *importScan) put(id string, seq uint64, rec []byte) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	ss := sc.sessions[id]
	g := groupOf(seq)
	pg := ss.pending[g]
	if pg == nil {
		pg = new(scannedGroup)
		ss.pending[g] = pg
	}
	pg.recs[(seq-1)%scanGroup] = rec
	pg.n++
	// A group is whole when every message of it from the import's first
	// on is scanned; the last group is whole when the import is (wait).
	from := max(ss.first, g*scanGroup+1)
	if uint64(pg.n) == (g+1)*scanGroup-from+1 {
		ss.groups[g] = encodeGroup(&pg.recs)
		delete(ss.pending, g)
	}
}

// wait stops the scanners once they are done with every message handed to
// them, and returns the records by session and group.
func (sc *importScan) wait() map[string]*scannedSession {
	close(sc.jobs)
	sc.wg.Wait()
	for _, ss := range sc.sessions {
		for g, pg := range ss.pending {
			ss.groups[g] = encodeGroup(&pg.recs)
		}
		ss.pending = nil
	}
	return sc.sessions
}

// encodeGroup is a group's value as the store keeps it (eachInGroup):
// its records in order of place, nil ones left out.
func encodeGroup(recs *[scanGroup][]byte) []byte {
	var v []byte
	for at, rec := range recs {
		if rec != nil {
			v = binary.AppendUvarint(v, uint64(at))
			v = binary.AppendUvarint(v, uint64(len(rec)))
			v = append(v, rec...)
		}
	}
	return v
}

// keepScanned keeps what an import that committed scanned, as
// PutScanRecords keeps records: in the background, a cache. A group that
// also holds messages from before the import is merged with what is kept
// of those. The import's sessions are unlocked (b.finish).
func (b *Bulk) keepScanned() {
	if b.scan == nil {
		return
	}
	sessions := b.scan.wait()
	b.scan = nil
	for id, ss := range sessions {
		_ = b.s.holdGroups(id, slices.Collect(maps.Keys(ss.groups)), func(txn *badger.Txn, g uint64) ([]byte, error) {
			if g*scanGroup+1 < ss.first {
				return mergeEncoded(txn, id, g, ss.groups[g])
			}
			return ss.groups[g], nil
		}) // a cache: what is not kept is scanned when it is needed
	}
}

// end finishes an import that committed, or did not: what it scanned is
// kept, or dropped.
func (b *Bulk) end(committed bool) {
	b.s.links.changed(append(slices.Clone(b.order), b.replaced...)...) // new sessions, and the ones it replaced
	b.finish()
	if committed {
		b.keepScanned()
	} else {
		b.stopScan()
	}
}

// stopScan lets an import that did not commit drop what it scanned.
func (b *Bulk) stopScan() {
	if b.scan != nil {
		b.scan.wait()
		b.scan = nil
	}
}

// mergeEncoded is group g of session id as read in txn, with the records
// of v, a group's value, in place of what it held for their messages.
func mergeEncoded(txn *badger.Txn, id string, g uint64, v []byte) ([]byte, error) {
	recs := map[uint64][]byte{}
	var seqs []uint64
	err := eachInGroup(v, func(at uint64, rec []byte) error {
		seq := g*scanGroup + at + 1
		recs[seq], seqs = rec, append(seqs, seq)
		return nil
	})
	if err != nil && !errors.Is(err, errBadGroup) {
		return nil, err
	}
	return mergeGroup(txn, id, g, seqs, recs)
}
