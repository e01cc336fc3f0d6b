package redact

import (
	"cmp"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// Derived is what one tier's redaction withholds of a session, as
// fingerprints to look for in everything else that is sent, each with the
// path it came from. It is read-only once built and safe for concurrent use.
type Derived struct {
	label string
	fpSet
	paths  []string // the paths fingerprints name (fingerprint.path)
	places []string // each path's placeholder
	win    windows  // finds them (windows.go)
	// shorter is the shortest fingerprint's length.
	shorter int
}

// fpSet is a set of fingerprints held without pointers: their texts side
// by side in one arena, each a 16-byte record. Held as strings, with their
// paths and placeholders, the set of a session that withholds half of its
// million reads (2.15M fingerprints) was 540 MB of heap, and the collector
// spent 22 of the 59 CPU seconds of a 33 s first count scanning it.
type fpSet struct {
	text arena
	fps  []fingerprint
	// sealed: a fingerprint's record holds a hash of its text, keyed by
	// seed, in place of its place in the arena, but for the texts searched
	// for plainly (windows.short), which the arena then holds alone. See
	// seal.
	sealed bool
	seed   maphash.Seed
}

// fingerprint is the text at its set's arena's text, withheld from its
// set's path'th path: 12 bytes (16 with the place and length apart: on the
// UI benchmark's session, 2.15M fingerprints, 8.6 MB more of the TUI's
// memory for as long as it runs). In a sealed set, text holds the text's
// hash instead (fpSet.seal).
type fingerprint struct {
	text ref
	path uint32
}

// bytesOf is the text of fingerprint i.
func (s *fpSet) bytesOf(i int32) []byte { return s.text.bytes(s.fps[i].text) }

// textOf is the text of fingerprint i, as a string sharing the arena.
func (s *fpSet) textOf(i int32) string { return s.text.string(s.fps[i].text) }

// lenOf is the length of fingerprint i; once the set is sealed, of one
// searched for plainly only (what finds the others says how long each is).
func (s *fpSet) lenOf(i int32) int { return s.text.length(s.fps[i].text) }

// is reports whether b is fingerprint i's text, for a fingerprint the
// index found, whose length b has.
func (s *fpSet) is(i int32, b []byte) bool {
	if s.sealed {
		r := s.fps[i].text
		return maphash.Bytes(s.seed, b) == uint64(r.hi)<<32|uint64(r.lo)
	}
	return string(b) == string(s.bytesOf(i))
}

// seal lets go of the set's texts, but those of keep (in order), and puts
// in each other fingerprint's record, in place of its text's place, a hash
// of the text keyed by a seed of its own: for a set whose index is made
// and that nothing encodes again. A set's texts are most of its memory (on
// the 20k benchmark session 1.7 MB for 21k fingerprints, on the UI
// benchmark's session 75 MB for 2.15M), and the hash takes no room of its
// own. Where the index finds a fingerprint, the text there is hashed and
// compared: two texts of one length with one 64-bit hash under a seed made
// at random for this set, 2^-64 odds at each of the few hundred thousand
// checks of a million-message session, would put a placeholder over text
// that is not withheld — more is replaced, never less.
func (s *fpSet) seal(keep []int32) {
	if s.sealed {
		return
	}
	s.seed = maphash.MakeSeed()
	// The hashes on every core, a range of the fingerprints each (on one,
	// 2.15M of them were 0.1 s of the UI benchmark's first count while the
	// other core waited); then the texts kept, in order.
	eachRange(fpRanges(len(s.fps)), func(_ int, lo, hi int) {
		k, _ := slices.BinarySearch(keep, int32(lo))
		for i := lo; i < hi; i++ {
			if k < len(keep) && keep[k] == int32(i) {
				k++
				continue
			}
			h := maphash.Bytes(s.seed, s.bytesOf(int32(i)))
			s.fps[i].text = ref{lo: uint32(h), hi: uint32(h >> 32)}
		}
	})
	var kept arena
	for _, i := range keep {
		s.fps[i].text = kept.add(s.textOf(i))
	}
	s.text, s.sealed = kept, true
}

// arena holds texts side by side in chunks that never move nor change once
// written, so that a text's place (ref) holds as long as the arena. Grown
// as one slice, the arena was copied whole at every growth, the old copy
// and the new held at once: on the UI benchmark's session, 80 MB of
// candidates' texts went to 100, with 80 more until the collector came. A
// chunk's header is made once, so a reader of an arena shared while it is
// added to (the TUI's matcher while its gathering grows) never reads what
// is being written.
type arena struct {
	chunks [][]byte // each its final length; the last filled up to used
	used   int
}

// arenaChunk is the size of an arena's chunks past its first few (the
// first arenaDoublings), which start at 4 KiB and double (a small
// session's arena stays small); a longer text gets one of its own. No text
// starts at or past arenaChunk in its chunk: a ref has room for
// refOffsetBits of it. The last chunk is filled only in part, but the heap
// counts it whole, and the collector paces itself by the heap: with chunks
// of 1 MiB, the 20k benchmark session's 1.69 MB of candidates' texts took
// 2.09 MB, its last chunk a third empty.
const (
	arenaChunk     = 1 << refOffsetBits
	arenaDoublings = 6 // 4 KiB << 6 is arenaChunk
)

// add copies s into the arena and returns its place.
func (a *arena) add(s string) ref {
	if s == "" {
		return ref{}
	}
	last := len(a.chunks) - 1
	if last < 0 || a.used+len(s) > len(a.chunks[last]) {
		size := arenaChunk
		if k := len(a.chunks); k < arenaDoublings {
			size = 4 << 10 << k
		}
		a.chunks = append(a.chunks, make([]byte, max(size, len(s))))
		last, a.used = last+1, 0
	}
	at := makeRef(last, a.used, len(s))
	a.used += copy(a.chunks[last][a.used:], s)
	return at
}

// locate returns r's text's chunk, and where in it the text starts and how
// long it is (the whole chunk, for refLong).
func (a *arena) locate(r ref) (chunk []byte, at, n int) {
	c, at, n := r.unpack()
	if n == 0 {
		return nil, 0, 0
	}
	chunk = a.chunks[c]
	if n == refLong {
		n = len(chunk)
	}
	return chunk, at, n
}

func (a *arena) bytes(r ref) []byte {
	c, at, n := a.locate(r)
	return c[at : at+n : at+n]
}

func (a *arena) string(r ref) string {
	c, at, n := a.locate(r)
	if n == 0 {
		return ""
	}
	return unsafe.String(&c[at], n)
}

func (a *arena) length(r ref) int {
	_, _, n := a.locate(r)
	return n
}

// ref is a text's place in an arena, in 8 bytes as two words of 4 (a
// uint64 would align a record holding it to 8): its chunk (the top 22
// bits), where in the chunk it starts (refOffsetBits), and its length
// (refLenBits), or refLong for a text that fills a chunk of its own, as
// every text of refLong bytes or more does (each is longer than
// arenaChunk). The place and length apart took 12 bytes, and every
// candidate and fingerprint holds one: on the UI benchmark's session, 2.1M
// candidates and then 2.15M fingerprints, 8.5 MB each of the TUI's peak.
type ref struct{ lo, hi uint32 }

const (
	refOffsetBits = 18
	refLenBits    = 24
	refLong       = 1<<refLenBits - 1
	refChunks     = 1 << (64 - refOffsetBits - refLenBits) // how many chunks a ref can name: a terabyte of texts at least
)

func makeRef(chunk, at, n int) ref {
	if chunk >= refChunks || at >= arenaChunk {
		panic("redact: a text's place is past what a fingerprint can name")
	}
	v := uint64(chunk)<<(refOffsetBits+refLenBits) | uint64(at)<<refLenBits | uint64(min(n, refLong))
	return ref{lo: uint32(v), hi: uint32(v >> 32)}
}

func (r ref) unpack() (chunk, at, n int) {
	v := uint64(r.hi)<<32 | uint64(r.lo)
	return int(v >> (refOffsetBits + refLenBits)), int(v >> refLenBits & (arenaChunk - 1)), int(v & refLong)
}

// fpList is the fingerprints of a Derived with the paths they name.
type fpList struct {
	fpSet
	pathTable
}

// pathTable numbers the paths fingerprints name, each once, in order.
type pathTable struct {
	paths  []string
	pathAt map[string]uint32
}

func (t *pathTable) pathIndex(path string) uint32 {
	if t.pathAt == nil {
		t.pathAt = map[string]uint32{}
	}
	i, ok := t.pathAt[path]
	if !ok {
		i = uint32(len(t.paths))
		t.paths = append(t.paths, path)
		t.pathAt[path] = i
	}
	return i
}

// Len is how many fingerprints d holds.
func (d *Derived) Len() int {
	if d == nil {
		return 0
	}
	return len(d.fps)
}

// Seal lets go of d's texts once nothing will encode d again (Gathered):
// what finds them keeps a hash of each (fpSet.seal), and a kept gathering
// it was read from, or the candidates' arena it shares, is let go. Sealed,
// d finds what it found; Fingerprints no longer has the texts. Not safe
// to call while d is in use.
func (d *Derived) Seal() {
	if d != nil {
		d.win.ready(&d.fpSet) // filed from the texts
		d.seal(d.win.short)
		d.win.from = nil
	}
}

// Sealed reports whether Seal let d's texts go.
func (d *Derived) Sealed() bool { return d != nil && d.sealed }

// Holds reports whether text is one of d's fingerprints, and the path it
// names; sealed or not.
func (d *Derived) Holds(text string) (path string, ok bool) {
	if d == nil {
		return "", false
	}
	plain := map[int32]bool{}
	for _, i := range d.win.short {
		plain[i] = true
	}
	for i, f := range d.fps {
		var same bool
		if !d.sealed || plain[int32(i)] {
			same = d.textOf(int32(i)) == text
		} else {
			same = d.is(int32(i), []byte(text))
		}
		if same {
			return d.paths[f.path], true
		}
	}
	return "", false
}

// Fingerprints returns d's fingerprints and the path of each; nil once
// d is sealed.
func (d *Derived) Fingerprints() (texts, paths []string) {
	if d == nil || d.Sealed() {
		return nil, nil
	}
	for i, f := range d.fps {
		texts, paths = append(texts, d.textOf(int32(i))), append(paths, d.paths[f.path])
	}
	return texts, paths
}

// candidates gathers fingerprints of withheld content, each kept with the
// path of its first appearance (order: where the content is in the session,
// so the result does not depend on how the work was shared out), and
// whether content the tier may read has it too. Like a Derived, they hold
// no pointers: texts in an arena, found by a hash of the text and then
// compared byte for byte, so a collision costs a comparison, never a
// wrong answer.
type candidates struct {
	seed   maphash.Seed
	warmed uint32 // what warm read, kept
	// slots finds a candidate by the hash of its text, open addressing
	// from the hash's low bits: in a table of 2^b slots, each holds the
	// candidate's index in list plus one (0: empty) in its low b bits,
	// and the hash's top 32-b bits above them, which turn away nearly
	// every other candidate met on the way without reading it. A
	// map[uint64]int32 and a chain through the candidates took about 40
	// bytes a candidate: on the UI benchmark's session, 2.35M candidates
	// were 218 MB while it was gathered, half of the TUI's memory; slots
	// of 8 bytes (32 bits of the hash beside the index), 32 MB of them.
	slots     []uint32
	slotBits  uint
	list      chunked[candidate]
	text      arena // the candidates' texts
	pathTable       // the paths named (metPath)
	// Each withheld text that had a fingerprint, as it was added: where
	// it is in the session, and its path. A candidate names the one it was
	// first met in. (Each candidate kept the two itself, 12 bytes more of
	// every one: on the UI benchmark's session, 2.35M candidates from
	// far fewer texts.)
	metOrder []int64
	metPath  []uint32
	lens     [maxFingerprint + 2]bool // the lengths of the candidates (lenClass): most pieces have none of them
	also     []uint64                 // a bit a candidate: content the tier may read has it too (not distinctive)
	// drop says build may drop them once it has taken the fingerprints:
	// nothing is gathered after (a Stream).
	drop bool
	// spill, if set, holds the texts instead of text, till build
	// (spill.go): text is then empty, and each candidate's text ref holds
	// its hash. Only for candidates dropped once built.
	spill *spilled
}

type candidate struct {
	text ref    // in the candidates' arena; spilled, the text's hash
	met  uint32 // the withheld text it was first met in (candidates.meet)
}

// pathOf is the path candidate k names: its first meeting's.
func (c *candidates) pathOf(k *candidate) uint32 { return c.metPath[k.met] }

// orderOf is where in the session candidate k was first met.
func (c *candidates) orderOf(k *candidate) int64 { return c.metOrder[k.met] }

// chunked holds a list in chunks of 1<<candidateShift that never move
// once full (the candidates, grown as one slice, held the old copy and the
// new at once at each growth: 56 and 70 MB on the UI benchmark's session).
// The first grows as a slice does till it is full, so a few take little.
type chunked[T any] struct {
	chunks [][]T
	n      int
}

const candidateShift = 16

func (l *chunked[T]) at(i int32) *T {
	return &l.chunks[i>>candidateShift][i&(1<<candidateShift-1)]
}

func (l *chunked[T]) add(k T) {
	switch {
	case l.n < 1<<candidateShift:
		if len(l.chunks) == 0 {
			l.chunks = [][]T{nil}
		}
		l.chunks[0] = append(l.chunks[0], k)
	default:
		if l.n>>candidateShift == len(l.chunks) {
			l.chunks = append(l.chunks, make([]T, 1<<candidateShift))
		}
		*l.at(int32(l.n)) = k
	}
	l.n++
}

// lenClass is where a text of n bytes is noted in candidates.lens: its
// length, or one past maxFingerprint for any longer (a word or value may
// be: a base64 blob, a minified line's identifier).
func lenClass(n int) int { return min(n, maxFingerprint+1) }

func (c *candidates) isAlso(i int32) bool {
	return int(i/64) < len(c.also) && c.also[i/64]&(1<<(i%64)) != 0
}

func (c *candidates) textOf(i int32) string {
	return c.text.string(c.list.at(i).text)
}

// find returns the candidate whose text is s, h its hash; -1 if none.
func (c *candidates) find(s string, h uint64) int32 {
	if len(c.slots) == 0 {
		return -1
	}
	b := c.slotBits
	mask, tag := uint64(len(c.slots)-1), slotTag(h, b)
	h2 := int64(-1)
	for at := h & mask; ; at = (at + 1) & mask {
		sl := c.slots[at]
		if sl == 0 {
			return -1
		}
		if sl>>b == tag {
			if i := int32(sl&(1<<b-1)) - 1; c.is(i, s, h, &h2) {
				return i
			}
		}
	}
}

// is reports whether candidate i's text is s, whose hash is h: compared
// byte for byte, or, spilled, by both hashes and its length (h2 holds the
// second hash of s once made, for the next candidate find compares; -1:
// not yet).
func (c *candidates) is(i int32, s string, h uint64, h2 *int64) bool {
	if c.spill == nil {
		return c.textOf(i) == s
	}
	if c.hashOf(i) != h {
		return false
	}
	m := c.spill.meta.at(i)
	if *h2 < 0 {
		*h2 = int64(c.spill.hash2(s))
	}
	return int(m.n) == len(s) && int64(m.h2) == *h2
}

// pieceQueue holds pieces of readable text to be looked up among the
// candidates together (findQueued): looked up one at a time, each piece's
// first slot, in a table of megabytes, missed the cache while the next
// piece waited.
type pieceQueue struct {
	s     [32]string
	h     [32]uint64
	seq   [32]uint64
	known [32]bool // of a length some candidate has: worth looking up
	n     int
}

// add queues a piece; true: the queue is full.
func (q *pieceQueue) add(s string, h, seq uint64, known bool) bool {
	q.s[q.n], q.h[q.n], q.seq[q.n], q.known[q.n] = s, h, seq, known
	q.n++
	return q.n == len(q.s)
}

// findQueued calls fn with each piece queued in q, in order, and the
// candidate it is (find; -1: none), and empties q. The pieces' first slots
// are read first, reads that do not wait for each other.
func (c *candidates) findQueued(q *pieceQueue, fn func(j int, k int32)) {
	n := q.n
	q.n = 0
	var first [len(q.s)]uint32
	if len(c.slots) > 0 {
		mask := uint64(len(c.slots) - 1)
		for j := range n {
			if q.known[j] {
				first[j] = c.slots[q.h[j]&mask]
			}
		}
	}
	for j := range n {
		k := int32(-1)
		if first[j] != 0 {
			k = c.find(q.s[j], q.h[j])
		}
		fn(j, k)
	}
}

// slotTag is the part of hash h a slot of a table of 2^b holds: its top
// 32-b bits (the low ones pick the slot).
func slotTag(h uint64, b uint) uint32 { return uint32(h>>32) >> b }

// slot files candidate i, whose text's hash is h, in c.slots (which has
// room: i+1 fits in the low c.slotBits bits).
func (c *candidates) slot(i int32, h uint64) {
	mask := uint64(len(c.slots) - 1)
	at := h & mask
	for c.slots[at] != 0 {
		at = (at + 1) & mask
	}
	c.slots[at] = slotTag(h, c.slotBits)<<c.slotBits | uint32(i+1)
}

// grow doubles the slots once they are three-quarters full.
func (c *candidates) grow() {
	if 4*(c.list.n+1) <= 3*len(c.slots) {
		return
	}
	c.resize(max(4, c.slotBits+1))
}

// reserve makes the slots room for n candidates in all, at most
// three-quarters full, if they have less.
func (c *candidates) reserve(n int) {
	c.init()
	b := c.slotBits
	for 4*(n+1) > 3<<b {
		b++
	}
	if b > c.slotBits {
		c.resize(b)
	}
}

// resize makes the slots 2^b, filing every candidate again by the hash of
// its text.
func (c *candidates) resize(b uint) {
	c.slotBits = b
	c.slots = nil // not held beside the new ones while they are made
	c.slots = make([]uint32, 1<<b)
	for i := range c.list.n {
		c.slot(int32(i), c.hashOf(int32(i)))
	}
}

// cut is a fingerprint cut from a withheld text, hashed.
type cut struct {
	fp string
	h  uint64
	w  int32 // the withheld text of its group it is of
}

// cutAll cuts the texts each of gs withheld into fingerprints, and hashes
// them with seed, a group on a core of its own. It touches no candidates:
// a piece of a session is cut while the one before it is filed.
func cutAll(gs []*gathered, seed maphash.Seed) [][]cut {
	cuts := make([][]cut, len(gs))
	var wg sync.WaitGroup
	for i, g := range gs {
		wg.Go(func() {
			for j, w := range g.withheld {
				eachFingerprint(w.text, func(fp string) {
					if namesFile(fp, w.path) {
						return // the file's name: its placeholder says it
					}
					cuts[i] = append(cuts[i], cut{fp, maphash.String(seed, fp), int32(j)})
				})
			}
		})
	}
	wg.Wait()
	return cuts
}

// fileAll adds the fingerprints cutAll cut of the texts gs withheld, at
// order in the session, in order, each withheld text that has one met
// (candidates.meet) before its first is put, and reports whether any was
// new. Filed as each was cut, a text at a time, the TUI's first count at a
// million messages took 10.9-12.3 s against 9.5-11.6 s with all of a piece
// cut first (five rounds, interleaved).
func (c *candidates) fileAll(gs []*gathered, cuts [][]cut, order int64) bool {
	added := false
	for i, g := range gs {
		met, last := uint32(0), int32(-1)
		for j, k := range cuts[i] {
			if j%warmAhead == 0 {
				c.warm(cuts[i][j:min(j+warmAhead, len(cuts[i]))])
			}
			if k.w != last {
				w := &g.withheld[k.w]
				met, last = c.meet(w.path, order+w.order), k.w
			}
			added = c.put(k.fp, k.h, met) || added
		}
	}
	return added
}

// warmAhead is how many cuts' slots fileAll reads before it puts them.
const warmAhead = 32

// warm reads the first slot of each of cuts, reads that do not wait for
// each other, so that putting them, one after another, finds those slots'
// cache lines there: put by put, each first read missed the cache of a
// table of megabytes with the next put waiting on it. (A slot read one
// put ahead instead measured no different.)
func (c *candidates) warm(cuts []cut) {
	if len(c.slots) == 0 {
		return
	}
	mask := uint64(len(c.slots) - 1)
	var v uint32
	for _, k := range cuts {
		v |= c.slots[k.h&mask]
	}
	c.warmed |= v // read, so that the reads are made
}

// meet notes a withheld text with a fingerprint, of path at order, and
// returns its number. (A session would need to withhold 4G of them for
// the numbers to wrap: tens of gigabytes of texts.)
func (c *candidates) meet(path string, order int64) uint32 {
	c.metOrder, c.metPath = append(c.metOrder, order), append(c.metPath, c.pathIndex(path))
	return uint32(len(c.metOrder) - 1)
}

func (c *candidates) init() {
	if c.slots == nil {
		if c.seed == (maphash.Seed{}) {
			c.seed = maphash.MakeSeed()
		}
		c.slots, c.slotBits = make([]uint32, 16), 4
	}
}

// put adds fp, whose hash is h, met in withheld text met (candidates.meet),
// or moves a later first meeting of it there; it reports whether fp is
// new.
func (c *candidates) put(fp string, h uint64, met uint32) bool {
	if i := c.find(fp, h); i >= 0 {
		if old := c.list.at(i); c.metOrder[met] < c.orderOf(old) {
			old.met = met
		}
		return false
	}
	c.init()
	c.grow()
	i := int32(c.list.n)
	var text ref
	if c.spill != nil {
		text = c.spill.add(fp, h)
	} else {
		text = c.text.add(fp)
	}
	c.list.add(candidate{text: text, met: met})
	c.lens[lenClass(len(fp))] = true
	c.slot(i, h)
	return true
}

// check marks the candidates that content the tier may read has too: the
// texts of each of groups, on a core of its own. With logs, each piece that
// is no candidate is noted there, one log a group, for a candidate met
// later (allowedLog).
func (c *candidates) check(groups [][]allowedText, logs []*allowedLog) {
	if c.list.n == 0 && logs == nil {
		return
	}
	c.init() // the seed the logs' hashes are made with
	found := make([][]int32, len(groups))
	var wg sync.WaitGroup
	for i, texts := range groups {
		wg.Go(func() {
			var q pieceQueue
			look := func() {
				c.findQueued(&q, func(j int, k int32) {
					switch {
					case k >= 0 && !c.isAlso(k):
						found[i] = append(found[i], k)
					case k < 0 && logs != nil:
						logs[i].add(q.h[j], q.seq[j])
					}
				})
			}
			for _, a := range texts {
				eachCandidate(a.text, func(piece string) {
					known := c.lens[lenClass(len(piece))]
					if !known && logs == nil {
						return
					}
					if q.add(piece, maphash.String(c.seed, piece), a.seq, known) {
						look()
					}
				})
			}
			look()
		})
	}
	wg.Wait()
	if n := (c.list.n + 63) / 64; len(c.also) < n {
		c.also = append(c.also, make([]uint64, n-len(c.also))...)
	}
	for _, f := range found {
		for _, k := range f {
			c.also[k/64] |= 1 << (k % 64)
		}
	}
}

// withheldText is a piece of withheld content of path; order is where it
// is in the session (its message's place, then its part's).
type withheldText struct {
	text, path string
	order      int64
}

// allowedText is a piece of content the tier may read, of the message with
// Seq seq.
type allowedText struct {
	text string
	seq  uint64
}

// build turns candidates, less those also in content the tier may read,
// into the matcher, and drops them if c.drop says so. No fingerprint: nil,
// and nothing to look for. The matcher shares the candidates' arena: what
// is added to them later goes past what it holds.
func build(c *candidates, label string) *Derived {
	if c.spill != nil {
		panic("redact: a gathering's spilled texts are read back before it is built (Stream.Finish)")
	}
	if c.drop {
		// Nothing is looked up again: the slots go before the
		// fingerprints are made beside the candidates (on the UI
		// benchmark's session, 32 MB of the TUI's peak).
		c.slots = nil
	}
	// Each step on every core, a range of the candidates each: on one,
	// the steps to the index were 0.26-0.35 s of the UI benchmark's
	// first count (2.26M candidates) while the other core waited.
	ranges := fpRanges(c.list.n)
	kept := make([]int, len(ranges)+1) // where each range's go in keep
	eachRange(ranges, func(r, lo, hi int) {
		n := 0
		for i := lo; i < hi; i++ {
			if !c.isAlso(int32(i)) {
				n++
			}
		}
		kept[r+1] = n
	})
	for r := range ranges {
		kept[r+1] += kept[r]
	}
	keep := make([]int32, kept[len(ranges)])
	eachRange(ranges, func(r, lo, hi int) {
		k := kept[r]
		for i := lo; i < hi; i++ {
			if !c.isAlso(int32(i)) {
				keep[k] = int32(i)
				k++
			}
		}
	})
	sortCandidates(c, keep)
	set := fpSet{text: arena{chunks: c.text.chunks[:len(c.text.chunks):len(c.text.chunks)]}, fps: make([]fingerprint, len(keep))}
	eachRange(fpRanges(len(keep)), func(_ int, lo, hi int) {
		for k, i := range keep[lo:hi] {
			cand := c.list.at(i)
			set.fps[lo+k] = fingerprint{text: cand.text, path: c.pathOf(cand)}
		}
	})
	paths := c.paths[:len(c.paths):len(c.paths)]
	if c.drop {
		// Gone before the index is made, not after: the two were the
		// peak of a first preview's memory at 1M messages.
		*c = candidates{}
	}
	if len(keep) == 0 {
		return nil
	}
	return newDerived(set, paths, label, nil)
}

// sortCandidates sorts keep, indexes of candidates, by where they were
// first met and then by text. Candidates are listed as they are first met,
// so keep is almost always in order of meeting already, and only the
// candidates met in one withheld text (its lines and words) need sorting
// among themselves: sorting all of them, comparing texts wherever two came
// from one text, was 0.54 s of the UI benchmark's 2M-candidate gathering,
// which a first count waits for.
//
// Both the check and the sorts run on every core, each on a range of keep
// whose start is moved on to where a text's candidates begin.
func sortCandidates(c *candidates, keep []int32) {
	order := func(i int32) int64 { return c.orderOf(c.list.at(i)) }
	byText := func(a, b int32) int { return strings.Compare(c.textOf(a), c.textOf(b)) }
	ranges := fpRanges(len(keep))
	var unordered atomic.Bool
	eachRange(ranges, func(_ int, lo, hi int) {
		for i := max(lo, 1); i < hi; i++ {
			if order(keep[i]) < order(keep[i-1]) {
				unordered.Store(true)
				return
			}
		}
	})
	if unordered.Load() {
		slices.SortFunc(keep, func(a, b int32) int { return cmp.Or(cmp.Compare(order(a), order(b)), byText(a, b)) })
		return
	}
	// Each range's start moved on past the text it is in, before any
	// is sorted: each text's candidates in one range.
	for r := 1; r < len(ranges); r++ {
		i := max(ranges[r][0], ranges[r-1][0])
		for i > 0 && i < len(keep) && order(keep[i]) == order(keep[i-1]) {
			i++
		}
		ranges[r-1][1], ranges[r][0], ranges[r][1] = i, i, max(i, ranges[r][1])
	}
	eachRange(ranges, func(_ int, lo, hi int) {
		for lo < hi {
			end, o := lo+1, order(keep[lo])
			for end < hi && order(keep[end]) == o { // hi ends a text's run
				end++
			}
			if end-lo > 1 {
				slices.SortFunc(keep[lo:end], byText)
			}
			lo = end
		}
	})
}

// newDerived makes the matcher of set, whose fingerprints name paths; from,
// if not nil, is where each fingerprint's windows start, as a kept
// gathering says (windows.from). Its index is filed at the first search
// (planWindows).
func newDerived(set fpSet, paths []string, label string, from []uint16) *Derived {
	d := &Derived{label: label, fpSet: set, paths: paths, places: make([]string, len(paths)), win: planWindows(&set, from), shorter: set.lenOf(0)}
	for i, p := range paths {
		d.places[i] = Placeholder(p, label)
	}
	for i := range set.fps {
		d.shorter = min(d.shorter, set.lenOf(int32(i)))
	}
	return d
}

// span is a piece of a unit to replace, and its placeholder.
type span struct {
	start, end  int
	kind        string // "derived" or "secret"
	path, rule  string
	placeholder string
}

// match appends to spans every occurrence in s of a fingerprint.
func (d *Derived) match(s string, spans []span) []span {
	return d.matchNoting(s, spans, nil, keptSpan{})
}

// matchNoting is match that also appends each place found to *noted, if
// noted is not nil, as at (its message, part and unit) with the place.
func (d *Derived) matchNoting(s string, spans []span, noted *[]keptSpan, at keptSpan) []span {
	if d == nil || len(s) < d.shorter {
		return spans
	}
	d.win.each(s, &d.fpSet, func(start, n int, i int32) bool {
		f := &d.fps[i]
		spans = append(spans, span{start: start, end: start + n, kind: "derived", path: d.paths[f.path], placeholder: d.places[f.path]})
		if noted != nil {
			at.start, at.n, at.path = int32(start), int32(n), int32(f.path)
			*noted = append(*noted, at)
		}
		return true
	})
	return spans
}

// DerivedBuilder gathers a tier's fingerprints from a session read in
// pieces (the TUI streams long sessions from the store, and extends what it
// gathered as a session grows): Add each piece, in order; for a whole
// session (CheckLate), Settle; when Stale says so, Recheck the session from
// its start; then Done. Add checks the content the tier may read in its
// piece against every fingerprint gathered so far, but a fingerprint first
// met in a later piece was not checked against the earlier ones: Settle
// does that from what Add noted (late.go), Recheck by reading them again.
type DerivedBuilder struct {
	model string
	p     *policy.Policy
	label string
	on    bool
	cands candidates
	order int64
	stale bool
	// memo, when a Stream gathers, decides each path once for all the
	// pieces and for the Stream's redaction after them. The TUI's
	// builders live as long as the program, while files may change, so
	// they decide afresh for each piece.
	memo *Memo
	// late: the pieces are a whole session from its start, and what Add
	// meets of readable content is noted in log for Settle (nil once it
	// has settled, or grown past its room, logRoom).
	late bool
	log  *allowedLog
	// logFloor is the room the log has however few the candidates
	// (LogRoom).
	logFloor int
	l        layout // how each piece is shared out across cores
	// expect is the Seqs of the messages to come (Expect), how many
	// candidates there were before them, and the part of them at which
	// the candidates' table is next made to their measure (16: a
	// sixteenth; 1: at their end, where it already is; 0: no more, or not
	// told).
	expect struct {
		from, to uint64
		had      int
		part     uint64
	}
}

// NewDerivedBuilder starts gathering for model's tier. For a tier without
// derived = "redact" it gathers nothing and Done returns nil.
func NewDerivedBuilder(model string, p *policy.Policy) *DerivedBuilder {
	tier, _ := p.TierFor(model)
	b := &DerivedBuilder{model: model, p: p, on: tier.RedactsDerived(), l: defaultLayout, logFloor: minLogRoom}
	b.cands.seed = maphash.MakeSeed() // fixed from now on: Prepare hashes with it
	if tier != nil {
		b.label = tier.Label
	}
	return b
}

// Add gathers from msgs, the next messages of the session.
func (b *DerivedBuilder) Add(msgs []session.Message) { b.AddPrepared(b.Prepare(msgs)) }

// Prepared is a piece of a session made ready to be gathered from
// (Prepare): its path pass run, and its withheld texts cut into
// fingerprints.
type Prepared struct {
	n    int    // messages
	last uint64 // the Seq of the last
	gs   []*gathered
	cuts [][]cut
}

// Prepare readies msgs, the next messages of the session, for AddPrepared.
// It touches nothing AddPrepared changes, so the readers of a session's
// pieces prepare them on every core while the pieces before them are
// added (session.Store.SourcedPiecesPrepared): run in turn on the one core
// pieces come to, the path pass and the cutting were 1.5 of that core's
// 3.3 s of CPU in the TUI's first gathering at a million messages, while
// the other core was idle a third of the time.
func (b *DerivedBuilder) Prepare(msgs []session.Message) *Prepared {
	if !b.on || len(msgs) == 0 {
		return nil
	}
	gs := gatherAll(msgs, b.model, b.p, b.memo, b.l)
	return &Prepared{n: len(msgs), last: msgs[len(msgs)-1].Seq, gs: gs, cuts: cutAll(gs, b.cands.seed)}
}

// AddPrepared gathers from p, the next messages of the session, prepared by
// Prepare.
func (b *DerivedBuilder) AddPrepared(p *Prepared) {
	if !b.on || p == nil {
		return
	}
	gs := p.gs
	added := b.cands.fileAll(gs, p.cuts, b.order)
	if b.expect.part > 0 && p.last >= b.expect.from {
		// A sixteenth of the way, an eighth, a quarter, a half: the rest
		// likely holds as many candidates for each message as those
		// before.
		done, all := p.last-b.expect.from+1, b.expect.to-b.expect.from+1
		if done*b.expect.part >= all {
			had := b.expect.had
			b.cands.reserve(had + int(uint64(b.cands.list.n-had)*all/min(done, all)))
			for b.expect.part > 0 && done*b.expect.part >= all {
				b.expect.part /= 2
			}
		}
	}
	switch {
	case !b.late:
		b.stale = b.stale || added && b.order > 0
		b.cands.check(allowedOf(gs), nil)
	case !b.stale: // stale: the log grew past its bound, and Recheck checks it all
		if b.order == 0 {
			b.log = &allowedLog{}
		}
		logs := make([]*allowedLog, len(gs))
		for i := range logs {
			logs[i] = &allowedLog{}
		}
		b.cands.check(allowedOf(gs), logs)
		b.noteLogs(logs)
	}
	b.order += int64(p.n) << 16
}

// Expect says the pieces to come are of the session's messages from..to
// (by Seq). A sixteenth of the way through them, and again an eighth, a
// quarter and half of the way, the candidates' table is made the size
// their rate so far says the rest will need (if it is smaller), instead of
// doubled as it fills, every candidate filed again each time: at a million
// messages that withhold half their reads (2.26M candidates) the doublings
// filed 3.1M again, 0.67 s of the 1.6 s the one core that files them took
// in the TUI's first gathering. The rate is taken again because it is not
// the same all the way: there, the first sixteenth of the messages held
// 1.44 candidates a message, the first eighth 1.64, the first half 2.18
// (sized at each, the table was filed again with 94k and 207k candidates,
// not 1.57M). Between those points, and past the half, the table still
// doubles as it fills.
func (b *DerivedBuilder) Expect(from, to uint64) {
	if from <= to {
		b.expect.from, b.expect.to, b.expect.had, b.expect.part = from, to, b.cands.list.n, 16
	}
}

// CheckLate, on, says the pieces added are a whole session from its start:
// Add notes what it meets of readable content that matches no fingerprint
// yet, and Settle, after the last piece, checks the fingerprints met later
// against it. Off, for pieces a session grew by, a fingerprint met after
// the first piece makes the builder stale.
func (b *DerivedBuilder) CheckLate(on bool) { b.late = on }

// Stale reports whether fingerprints were found after content they were
// not checked against: the pieces added so far must go through Recheck.
// A whole session's gathering is stale until it has settled.
func (b *DerivedBuilder) Stale() bool { return b.stale || b.log != nil }

// Recheck checks msgs, pieces of the session up to the last one added, read
// again from the start, against every fingerprint gathered. Once all of
// them have been through it (last; msgs may then be empty), the builder is
// no longer stale.
func (b *DerivedBuilder) Recheck(msgs []session.Message, last bool) {
	if !b.on {
		return
	}
	if len(msgs) > 0 {
		b.cands.check(allowedOf(gatherAll(msgs, b.model, b.p, b.memo, b.l)), nil)
	}
	if last {
		b.stale, b.log = false, nil
	}
}

// Done returns the fingerprints gathered: nil when there are none.
func (b *DerivedBuilder) Done() *Derived {
	if !b.on {
		return nil
	}
	return build(&b.cands, b.label)
}

// DoneDropping is Done for a builder that gathers no more: its candidates
// go before the matcher's index is made, and Add, Recheck and Done must
// not be called again.
func (b *DerivedBuilder) DoneDropping() *Derived {
	b.cands.drop = true
	return b.Done()
}

// Candidates is how many candidates b holds: with their slots and texts,
// about 75 bytes each.
func (b *DerivedBuilder) Candidates() int { return b.cands.list.n }

// PrepareDerived gathers the fingerprints of model's tier from a whole
// session at once.
func PrepareDerived(msgs []session.Message, model string, p *policy.Policy) *Derived {
	b := NewDerivedBuilder(model, p)
	b.Add(msgs)
	return b.Done()
}
