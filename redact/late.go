package redact

import (
	"hash/maphash"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/scrim-dev/scrim/session"
)

// A gathering of a whole session from its start (CheckLate) meets much of
// the content the tier may read before the withheld content that shares a
// line or word with it, and such a candidate is not distinctive. Reading the
// session again to check every candidate against all of that content was a
// third of the TUI's first count at a million messages (2.0 of 5.9 s). So
// each piece of readable content is checked against the candidates met so
// far when it is met, and one that matches none is noted in a log by its
// hash and its message. Settle then looks every candidate up in the log,
// and reads again only the messages where a candidate's hash was noted, to
// compare the texts themselves: a candidate is marked by what it is, never
// by a hash alone. A candidate whose hash was noted but whose text is not
// there (two texts of one 64-bit hash, under a seed made at random for the
// gathering) leaves the builder stale, and the session is read again as
// before; so does a log grown past its bound (logRoom).

// allowedLog is the hashes of pieces of readable content, and the Seqs of
// the messages they are in, in order of noting.
type allowedLog struct {
	hashes [][]uint64 // chunks: each holds up to its capacity
	n      int
	runs   []logRun // where each message's pieces start
}

type logRun struct {
	seq  uint64
	from int // the run's first piece
}

// logChunk is the most pieces a log keeps in one chunk (512 KiB); smaller
// logs take chunks as long as what they hold, so that a log per goroutine
// per piece of the session stays small.
const logChunk = 1 << 16

// logRoom is how many pieces a log may note beside candidates that take
// candBytes: as many bytes as half of theirs, or 1 MiB, and at most maxLog
// (32 MiB). A gathering that withholds much (the UI benchmark's
// million-message session: 2.26M candidates, over 100 MB) notes all it
// meets (2.3M pieces, 18 MB) and spares the second read; one that withholds
// little is read again instead, as cheap beside the rest of it as it was,
// and its memory stays what it was (the 20,000-message benchmark session
// met 2.27M pieces of readable content for 21k candidates: a log of 18 MB,
// where the whole first preview had held 23-25 MiB).
func logRoom(candBytes int) int { return min(maxLog, max(1<<20, candBytes/2)/8) }

var maxLog = 1 << 22 // a variable for tests

func (l *allowedLog) add(h, seq uint64) {
	if len(l.runs) == 0 || l.runs[len(l.runs)-1].seq != seq {
		l.runs = append(l.runs, logRun{seq, l.n})
	}
	last := len(l.hashes) - 1
	if last < 0 || len(l.hashes[last]) == cap(l.hashes[last]) {
		l.hashes = append(l.hashes, make([]uint64, 0, min(logChunk, max(256, l.n))))
		last++
	}
	l.hashes[last] = append(l.hashes[last], h)
	l.n++
}

// merge notes o's pieces after l's.
func (l *allowedLog) merge(o *allowedLog) {
	o.each(l.add)
}

// each calls fn with every piece noted, in order, and its message's Seq.
func (l *allowedLog) each(fn func(h, seq uint64)) { l.eachIn(0, len(l.hashes), fn) }

// eachIn is each for the pieces of chunks lo to hi-1 only.
func (l *allowedLog) eachIn(lo, hi int, fn func(h, seq uint64)) {
	i := 0 // the first piece's place in the log
	for _, c := range l.hashes[:lo] {
		i += len(c)
	}
	// The run of that piece's message: the last to start at or before it.
	r, _ := slices.BinarySearchFunc(l.runs, i+1, func(a logRun, at int) int { return a.from - at })
	r--
	for _, c := range l.hashes[lo:hi] {
		for _, h := range c {
			for r+1 < len(l.runs) && l.runs[r+1].from <= i {
				r++
			}
			fn(h, l.runs[r].seq)
			i++
		}
	}
}

// noteLogs keeps logs, one a group of the last Add, in b's log; past its
// room (logRoom) the log goes, and the session must be read again (Stale).
func (b *DerivedBuilder) noteLogs(logs []*allowedLog) {
	room := logRoom(b.cands.bytes())
	for _, l := range logs {
		if b.log.n+l.n > room {
			b.log, b.stale = nil, true
			return
		}
		b.log.merge(l)
	}
}

// Settle finishes a gathering of a whole session from its start
// (CheckLate), once the last piece is added: each candidate whose hash the
// log noted in content the tier may read is checked against the messages
// it was noted in, which read hands to fn (read is given their Seqs, in
// order). Stale then says whether the session must still be read again
// through Recheck: only when a hash was shared by another text, or the log
// had grown past its bound. An error from read is returned, and leaves the
// builder stale.
func (b *DerivedBuilder) Settle(read func(seqs []uint64, fn func(msgs []session.Message)) error) error {
	log := b.log
	b.log = nil
	if !b.on || log == nil || b.stale {
		return nil
	}
	suspects := b.cands.suspects(log)
	if len(suspects) == 0 {
		return nil
	}
	seqs := make([]uint64, 0, len(suspects))
	for _, seq := range suspects {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	seqs = slices.Compact(seqs)
	err := read(seqs, func(msgs []session.Message) {
		b.cands.check(allowedOf(gatherAll(msgs, b.model, b.p, b.memo, b.l)), nil)
	})
	if err != nil {
		b.stale = true
		return err
	}
	for k := range suspects {
		if !b.cands.isAlso(k) {
			b.stale = true // a hash of other text: read everything again
			return nil
		}
	}
	return nil
}

// suspects returns the candidates, not yet marked as in content the tier
// may read, whose text's hash log noted there, each with the Seq of the
// first message it was noted in. The log is looked up on every core.
func (c *candidates) suspects(log *allowedLog) map[int32]uint64 {
	if c.list.n == 0 || log.n == 0 {
		return nil
	}
	// The log's chunks shared out between the cores.
	workers := min(len(log.hashes), runtime.GOMAXPROCS(0))
	found := make([]map[int32]uint64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			m := map[int32]uint64{}
			log.eachIn(len(log.hashes)*w/workers, len(log.hashes)*(w+1)/workers, func(h, seq uint64) {
				c.eachHashed(h, func(k int32) {
					if _, ok := m[k]; !ok && !c.isAlso(k) {
						m[k] = seq
					}
				})
			})
			found[w] = m
		})
	}
	wg.Wait()
	out := map[int32]uint64{}
	for _, m := range found {
		for k, seq := range m {
			if old, ok := out[k]; !ok || seq < old {
				out[k] = seq
			}
		}
	}
	return out
}

// bytes is about what c holds: texts, list, slots and meetings.
func (c *candidates) bytes() int {
	n := 0
	for _, ch := range c.text.chunks {
		n += len(ch)
	}
	return n + c.list.n*int(unsafe.Sizeof(candidate{})) + 4*len(c.slots) + 12*len(c.metOrder)
}

// eachHashed calls fn with each candidate whose text's hash is h.
func (c *candidates) eachHashed(h uint64, fn func(k int32)) {
	if len(c.slots) == 0 {
		return
	}
	b := c.slotBits
	mask, tag := uint64(len(c.slots)-1), slotTag(h, b)
	for at := h & mask; ; at = (at + 1) & mask {
		sl := c.slots[at]
		if sl == 0 {
			return
		}
		if sl>>b == tag {
			if i := int32(sl&(1<<b-1)) - 1; maphash.String(c.seed, c.textOf(i)) == h {
				fn(i)
			}
		}
	}
}
