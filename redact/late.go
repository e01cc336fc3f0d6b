package redact

import (
	"cmp"
	"maps"
	"slices"
	"unsafe"

	"github.com/scrim-dev/scrim/internal/cores"
	"github.com/scrim-dev/scrim/session"
)

// A gathering of a whole session from its start (CheckLate) meets much of
// the content the tier may read before the withheld content that shares a
// line or word with it, and such a candidate is not distinctive. Reading the
// session again to check every candidate against all of that content was a
// third of the TUI's first count at a million messages (2.0 of 5.9 s). So
// each piece of readable content is checked against the candidates met so
// far when it is met, and one that matches none is noted in a log by 32
// bits of its hash and its message. Settle then looks every candidate up in
// the log, and reads again only the messages where a candidate's bits were
// noted, to compare the texts themselves: a candidate is marked by what it
// is, never by a hash alone. Two texts share 32 bits often enough (a
// million-message import: 4.6M pieces noted, 497k candidates, some 500
// pairs) that a candidate not found in the first message its bits were
// noted in is looked for in every other one before it is let stand. A log
// grown past its room (LogRoom) goes, and the session is read again.
//
// Settle trusts the messages read to be those added: a caller whose
// session may change between the two (an import revising it) checks that
// it did not.

// allowedLog is 32 bits of the hash of each piece of readable content, and
// the Seqs of the messages they are in, in order of noting: 4 bytes a
// piece (8 before, and a million-message import's 4.6M pieces outgrew the
// log's room a hundredth of the way through, to be read again whole: 2.4 s
// of its TUI's first count).
type allowedLog struct {
	keys [][]uint32 // chunks: each holds up to its capacity
	n    int
	runs []logRun // where each message's pieces start
}

type logRun struct {
	seq  uint64
	from int // the run's first piece
}

// logKey is the part of a piece's hash a log keeps.
func logKey(h uint64) uint32 { return uint32(h & logKeyBits) }

// logKeyBits are the bits of a hash logKey keeps: fewer in tests, to have
// texts share them.
var logKeyBits uint64 = 1<<32 - 1

// logChunk is the most pieces a log keeps in one chunk (256 KiB); smaller
// logs take chunks as long as what they hold, so that a log per goroutine
// per piece of the session stays small.
const logChunk = 1 << 16

// bytes is what l holds.
func (l *allowedLog) bytes() int {
	return 4*l.n + int(unsafe.Sizeof(logRun{}))*len(l.runs)
}

// logRoom is how many bytes a log may take beside candidates that take
// candBytes: half as many, or floor (the builder's LogRoom, minLogRoom
// unless told), and at most maxLog. A gathering that withholds much (the UI
// benchmark's million-message session: 2.26M candidates, over 100 MB)
// notes all it meets (2.3M pieces, 9 MB) and spares the second read; one
// that withholds little is read again instead, as cheap beside the rest of
// it as it was, and its memory stays what it was (the 20,000-message
// benchmark session met 2.27M pieces of readable content for 21k
// candidates: a log of 9 MB, where the whole first preview had held
// 23-25 MiB), unless its caller gives it room (the TUI, whose bound is
// its count's memory, not a preview's).
func logRoom(candBytes, floor int) int { return min(maxLog, max(floor, candBytes/2)) }

var maxLog = 64 << 20 // a variable for tests

func (l *allowedLog) add(h, seq uint64) { l.note(logKey(h), seq) }

// note notes a piece by its key.
func (l *allowedLog) note(key uint32, seq uint64) {
	if len(l.runs) == 0 || l.runs[len(l.runs)-1].seq != seq {
		l.runs = append(l.runs, logRun{seq, l.n})
	}
	last := len(l.keys) - 1
	if last < 0 || len(l.keys[last]) == cap(l.keys[last]) {
		l.keys = append(l.keys, make([]uint32, 0, min(logChunk, max(256, l.n))))
		last++
	}
	l.keys[last] = append(l.keys[last], key)
	l.n++
}

// merge notes o's pieces after l's.
func (l *allowedLog) merge(o *allowedLog) { o.each(l.note) }

// each calls fn with every piece noted, in order, and its message's Seq.
func (l *allowedLog) each(fn func(key uint32, seq uint64)) { l.eachIn(0, len(l.keys), fn) }

// eachIn is each for the pieces of chunks lo to hi-1 only.
func (l *allowedLog) eachIn(lo, hi int, fn func(key uint32, seq uint64)) {
	i := 0 // the first piece's place in the log
	for _, c := range l.keys[:lo] {
		i += len(c)
	}
	// The run of that piece's message: the last to start at or before it.
	r, _ := slices.BinarySearchFunc(l.runs, i+1, func(a logRun, at int) int { return a.from - at })
	r--
	for _, c := range l.keys[lo:hi] {
		for _, k := range c {
			for r+1 < len(l.runs) && l.runs[r+1].from <= i {
				r++
			}
			fn(k, l.runs[r].seq)
			i++
		}
	}
}

// noteLogs keeps logs, one a group of the last Add, in b's log; past its
// room (logRoom) the log goes, and the session must be read again (Stale).
func (b *DerivedBuilder) noteLogs(logs []*allowedLog) {
	room := logRoom(b.cands.bytes(), b.logFloor)
	for _, l := range logs {
		if b.log.bytes()+l.bytes() > room {
			b.log, b.stale = nil, true
			return
		}
		b.log.merge(l)
	}
}

// LogRoom lets a whole session's gathering (CheckLate) note up to n bytes
// of readable content for Settle, however few candidates it holds, before
// it gives up and the session must be read again.
func (b *DerivedBuilder) LogRoom(n int) { b.logFloor = max(n, minLogRoom) }

// minLogRoom is the room a log has however few the candidates, unless its
// builder is given more (LogRoom).
const minLogRoom = 1 << 20

// Settle finishes a gathering of a whole session from its start
// (CheckLate), once the last piece is added: each candidate whose bits the
// log noted in content the tier may read is checked against a message it
// was noted in, which read hands to fn (read is given their Seqs, in
// order), and one not found there against every other such message. Stale
// then says whether the session must still be read again through Recheck:
// only when the log had grown past its room. An error from read is
// returned, and leaves the builder stale.
func (b *DerivedBuilder) Settle(read func(seqs []uint64, fn func(msgs []session.Message)) error) error {
	log := b.log
	b.log = nil
	if !b.on || log == nil || b.stale {
		return nil
	}
	check := func(seqs []uint64) error {
		slices.Sort(seqs)
		seqs = slices.Compact(seqs)
		err := read(seqs, func(msgs []session.Message) {
			b.cands.check(allowedOf(gatherAll(msgs, b.model, b.p, b.memo, b.l)), nil)
		})
		if err != nil {
			b.stale = true
		}
		return err
	}
	// The first message each suspect was noted in: nearly always it is
	// there.
	suspects := b.cands.suspects(log, nil)
	if len(suspects) == 0 {
		return nil
	}
	seqs := make([]uint64, 0, len(suspects))
	for _, first := range suspects {
		seqs = append(seqs, first[0])
	}
	if err := check(seqs); err != nil {
		return err
	}
	// The rest: every other message their bits were noted in.
	var left []int32
	for k := range suspects {
		if !b.cands.isAlso(k) {
			left = append(left, k)
		}
	}
	if len(left) == 0 {
		return nil
	}
	seqs = seqs[:0]
	for _, all := range b.cands.suspects(log, left) {
		seqs = append(seqs, all...)
	}
	return check(seqs)
}

// suspects returns the candidates, not yet marked as in content the tier
// may read, whose bits log noted there, each with the Seq of the first
// message it was noted in; or, for only, those candidates with the Seqs of
// every message. Each step runs on every core: the candidates' keys set a
// bit each in a map of their top 24 bits (2 MiB, which stays in the
// cache), the pieces of the log whose bit is set are kept with their Seqs
// (a few in a hundred for a million-message import's 497k candidates, one
// in eight for the UI benchmark's 2.26M), and each candidate is looked up
// among those, sorted. Searching a sorted copy of every candidate's key
// for each piece instead, a miss at nearly every step, took 1.0 s for that
// import's 4.6M pieces, and the copy was 18 MB for the 2.26M candidates.
func (c *candidates) suspects(log *allowedLog, only []int32) map[int32][]uint64 {
	if c.list.n == 0 || log.n == 0 {
		return nil
	}
	n := c.list.n
	if only != nil {
		n = len(only)
	}
	cand := func(i int) int32 {
		if only != nil {
			return only[i]
		}
		return int32(i)
	}
	keyOf := func(k int32) uint32 { return logKey(c.hashOf(k)) }
	ranges := fpRanges(n)
	own := make([][]uint64, len(ranges)) // a map a core: no write waits for another's
	eachRange(ranges, func(r, lo, hi int) {
		bits := make([]uint64, 1<<24/64)
		for i := lo; i < hi; i++ {
			if k := cand(i); !c.isAlso(k) {
				key := keyOf(k)
				bits[key>>8/64] |= 1 << (key >> 8 % 64)
			}
		}
		own[r] = bits
	})
	bits := own[0]
	for _, o := range own[1:] {
		for i, w := range o {
			bits[i] |= w
		}
	}
	type hit struct {
		key uint32
		seq uint64
	}
	workers := min(len(log.keys), cores.Free())
	// Each worker's hits in pieces of hitPiece: one slice grown by append
	// copied the whole of it at each doubling, and a copy is a single
	// memmove the runtime cannot preempt. Into fresh pages (on this
	// project's test machine, a few microseconds each the first time) the
	// copy of the UI benchmark's hits took over 30 ms, the collector's
	// stack scan waited for it, and the TUI's event loop, parked to assist
	// the collector, with it: a frame 35 ms late while the user scrolled
	// (a runtime trace of BenchmarkScrollInTmux). The first piece grows by
	// append up to hitPiece, so that a few hits take no more room than in
	// one slice.
	found := make([][][]hit, workers)
	eachRange(groupRanges(len(log.keys), workers), func(w, lo, hi int) {
		var piece []hit
		log.eachIn(lo, hi, func(key uint32, seq uint64) {
			if bits[key>>8/64]&(1<<(key>>8%64)) == 0 {
				return
			}
			if len(piece) == cap(piece) && len(piece) >= hitPiece {
				found[w] = append(found[w], piece)
				piece = make([]hit, 0, hitPiece)
			}
			piece = append(piece, hit{key, seq})
		})
		if len(piece) > 0 {
			found[w] = append(found[w], piece)
		}
	})
	// The hits sorted by key and Seq, and where the hits of each key's top
	// 16 bits start (a few hits to look through for a key, not a search of
	// them all): placed by those bits, counted first, then each group
	// sorted, on every core. Sorted whole on one, they were a third of the
	// UI benchmark's Settle while the other core waited.
	dir := make([]int, 1<<16+1)
	clear(bits) // now the hits' keys: most candidates have none
	for _, f := range found {
		for _, p := range f {
			for _, h := range p {
				dir[h.key>>16+1]++
				bits[h.key>>8/64] |= 1 << (h.key >> 8 % 64)
			}
		}
	}
	for b := 1; b < len(dir); b++ {
		dir[b] += dir[b-1]
	}
	// Each hit placed at the end of its group, which moves back a place:
	// once all are placed, dir[b+1] is where group b starts.
	hits := make([]hit, dir[len(dir)-1])
	for w, f := range found {
		for _, p := range f {
			for _, h := range p {
				dir[h.key>>16+1]--
				hits[dir[h.key>>16+1]] = h
			}
		}
		found[w] = nil
	}
	copy(dir, dir[1:])
	dir[len(dir)-1] = len(hits)
	eachRange(groupRanges(len(dir)-1, cores.Free()), func(_ int, lo, hi int) {
		for b := lo; b < hi; b++ {
			if g := hits[dir[b]:dir[b+1]]; len(g) > 1 {
				slices.SortFunc(g, func(a, b hit) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.seq, b.seq)) })
			}
		}
	})
	out := make([]map[int32][]uint64, len(ranges))
	eachRange(ranges, func(r, lo, hi int) {
		m := map[int32][]uint64{}
		for i := lo; i < hi; i++ {
			k := cand(i)
			if c.isAlso(k) {
				continue
			}
			key := keyOf(k)
			if bits[key>>8/64]&(1<<(key>>8%64)) == 0 {
				continue
			}
			at, end := dir[key>>16], dir[key>>16+1]
			for at < end && hits[at].key != key {
				at++
			}
			if at == end {
				continue
			}
			if only == nil {
				m[k] = []uint64{hits[at].seq}
				continue
			}
			for ; at < len(hits) && hits[at].key == key; at++ {
				if seqs := m[k]; len(seqs) == 0 || seqs[len(seqs)-1] != hits[at].seq {
					m[k] = append(seqs, hits[at].seq)
				}
			}
		}
		out[r] = m
	})
	all := out[0]
	for _, m := range out[1:] {
		maps.Copy(all, m)
	}
	return all
}

// hitPiece is how many hits (16 bytes each) a piece of suspects' holds (a
// variable for tests).
var hitPiece = 1 << 15

// bytes is about what c holds: texts, list, slots and meetings.
func (c *candidates) bytes() int {
	n := 0
	for _, ch := range c.text.chunks {
		n += len(ch)
	}
	if c.spill != nil {
		// Counted as if held: the log's room (logRoom) is the same
		// wherever they are.
		n += int(c.spill.size)
	}
	return n + c.list.n*int(unsafe.Sizeof(candidate{})) + 4*len(c.slots) + 12*len(c.metOrder)
}
