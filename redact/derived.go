package redact

import (
	"cmp"
	"hash/maphash"
	"math/bits"
	"slices"
	"strings"
	"sync"
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
}

// fingerprint is the text at off of its set's arena, n bytes, withheld from
// its set's path'th path.
type fingerprint struct {
	off     uint64
	n, path uint32
}

// bytesOf is the text of fingerprint i.
func (s *fpSet) bytesOf(i int32) []byte {
	f := s.fps[i]
	return s.text.bytes(f.off, f.n)
}

// textOf is the text of fingerprint i, as a string sharing the arena.
func (s *fpSet) textOf(i int32) string {
	f := s.fps[i]
	return s.text.string(f.off, f.n)
}

// arena holds texts side by side in chunks that never move nor change once
// written, so that a text's place (its chunk in the top 32 bits, where it
// starts in it below) holds as long as the arena. Grown as one slice, the
// arena was copied whole at every growth, the old copy and the new held at
// once: on the UI benchmark's session, 80 MB of candidates' texts went to
// 100, with 80 more until the collector came. A chunk's header is made
// once, so a reader of an arena shared while it is added to (the TUI's
// matcher while its gathering grows) never reads what is being written.
type arena struct {
	chunks [][]byte // each its final length; the last filled up to used
	used   int
}

// arenaChunk is the size of an arena's chunks past its first few, which
// start at 4 KiB and double (a small session's arena stays small); a
// longer text gets one of its own.
const arenaChunk = 1 << 20

// add copies s into the arena and returns its place.
func (a *arena) add(s string) uint64 {
	last := len(a.chunks) - 1
	if last < 0 || a.used+len(s) > len(a.chunks[last]) {
		size := arenaChunk
		if k := len(a.chunks); k < 8 {
			size = 4 << 10 << k
		}
		a.chunks = append(a.chunks, make([]byte, max(size, len(s))))
		last, a.used = last+1, 0
	}
	at := uint64(last)<<32 | uint64(a.used)
	a.used += copy(a.chunks[last][a.used:], s)
	return at
}

func (a *arena) bytes(at uint64, n uint32) []byte {
	c, i := a.chunks[at>>32], uint32(at)
	return c[i : i+n : i+n]
}

func (a *arena) string(at uint64, n uint32) string {
	if n == 0 {
		return ""
	}
	return unsafe.String(&a.chunks[at>>32][uint32(at)], n)
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

// Fingerprints returns d's fingerprints and the path of each.
func (d *Derived) Fingerprints() (texts, paths []string) {
	if d == nil {
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
	seed maphash.Seed
	// slots finds a candidate by the hash of its text, open addressing
	// from the hash's low bits: each slot holds the hash's top 32 bits,
	// then the candidate's index in list plus one (0: empty). A
	// map[uint64]int32 and a chain through the candidates took about 40
	// bytes a candidate: on the UI benchmark's session, 2.35M candidates
	// were 218 MB while it was gathered, half of the TUI's memory.
	slots     []uint64
	list      candidateList
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
}

type candidate struct {
	off    uint64 // its text's place in the arena
	n, met uint32 // its length; the withheld text it was first met in (candidates.meet)
}

// pathOf is the path candidate k names: its first meeting's.
func (c *candidates) pathOf(k *candidate) uint32 { return c.metPath[k.met] }

// orderOf is where in the session candidate k was first met.
func (c *candidates) orderOf(k *candidate) int64 { return c.metOrder[k.met] }

// candidateList holds candidates in chunks of 1<<candidateShift that never
// move once full (grown as one slice, each growth held the old copy and
// the new at once: 56 and 70 MB on the UI benchmark's session). The first
// grows as a slice does till it is full, so a few candidates take little.
type candidateList struct {
	chunks [][]candidate
	n      int
}

const candidateShift = 16

func (l *candidateList) at(i int32) *candidate {
	return &l.chunks[i>>candidateShift][i&(1<<candidateShift-1)]
}

func (l *candidateList) add(k candidate) {
	switch {
	case l.n < 1<<candidateShift:
		if len(l.chunks) == 0 {
			l.chunks = [][]candidate{nil}
		}
		l.chunks[0] = append(l.chunks[0], k)
	default:
		if l.n>>candidateShift == len(l.chunks) {
			l.chunks = append(l.chunks, make([]candidate, 1<<candidateShift))
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
	k := c.list.at(i)
	return c.text.string(k.off, k.n)
}

// find returns the candidate whose text is s, h its hash; -1 if none.
func (c *candidates) find(s string, h uint64) int32 {
	if len(c.slots) == 0 {
		return -1
	}
	mask := uint64(len(c.slots) - 1)
	for at := h & mask; ; at = (at + 1) & mask {
		sl := c.slots[at]
		if sl == 0 {
			return -1
		}
		if uint32(sl>>32) == uint32(h>>32) {
			if i := int32(uint32(sl)) - 1; int(c.list.at(i).n) == len(s) && c.textOf(i) == s {
				return i
			}
		}
	}
}

// slot files candidate i, whose text's hash is h, in c.slots (which has
// room).
func (c *candidates) slot(i int32, h uint64) {
	mask := uint64(len(c.slots) - 1)
	at := h & mask
	for c.slots[at] != 0 {
		at = (at + 1) & mask
	}
	c.slots[at] = h>>32<<32 | uint64(i+1)
}

// grow doubles the slots once they are three-quarters full, filing every
// candidate again by the hash of its text.
func (c *candidates) grow() {
	if 4*(c.list.n+1) <= 3*len(c.slots) {
		return
	}
	c.slots = make([]uint64, max(16, 2*len(c.slots)))
	for i := range c.list.n {
		c.slot(int32(i), maphash.String(c.seed, c.textOf(int32(i))))
	}
}

// add adds the fingerprints of text, withheld content of path at order in
// the session, and reports whether any was new.
func (c *candidates) add(text, path string, order int64) bool {
	added := false
	met := uint32(0)
	named := false
	eachFingerprint(text, func(fp string) {
		if !named {
			met, named = c.meet(path, order), true
		}
		added = c.put(fp, c.hash(fp), met) || added
	})
	return added
}

// meet notes a withheld text with a fingerprint, of path at order, and
// returns its number. (A session would need to withhold 4G of them for
// the numbers to wrap: tens of gigabytes of texts.)
func (c *candidates) meet(path string, order int64) uint32 {
	c.metOrder, c.metPath = append(c.metOrder, order), append(c.metPath, c.pathIndex(path))
	return uint32(len(c.metOrder) - 1)
}

func (c *candidates) hash(s string) uint64 {
	c.init()
	return maphash.String(c.seed, s)
}

func (c *candidates) init() {
	if c.slots == nil {
		c.seed, c.slots = maphash.MakeSeed(), make([]uint64, 16)
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
	c.list.add(candidate{off: c.text.add(fp), met: met, n: uint32(len(fp))})
	c.lens[lenClass(len(fp))] = true
	c.slot(i, h)
	return true
}

// check marks the candidates that content the tier may read has too: the
// texts of each of groups, on a core of its own.
func (c *candidates) check(groups [][]string) {
	if c.list.n == 0 {
		return
	}
	found := make([][]int32, len(groups))
	var wg sync.WaitGroup
	for i, texts := range groups {
		wg.Go(func() {
			for _, a := range texts {
				eachCandidate(a, func(piece string) {
					if c.lens[lenClass(len(piece))] {
						if k := c.find(piece, maphash.String(c.seed, piece)); k >= 0 && !c.isAlso(k) {
							found[i] = append(found[i], k)
						}
					}
				})
			}
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

// build turns candidates, less those also in content the tier may read,
// into the matcher, and drops them if c.drop says so. No fingerprint: nil,
// and nothing to look for. The matcher shares the candidates' arena: what
// is added to them later goes past what it holds.
func build(c *candidates, label string) *Derived {
	also := 0
	for _, w := range c.also {
		also += bits.OnesCount64(w)
	}
	keep := make([]int32, 0, c.list.n-also)
	for i := range c.list.n {
		if !c.isAlso(int32(i)) {
			keep = append(keep, int32(i))
		}
	}
	slices.SortFunc(keep, func(a, b int32) int {
		return cmp.Or(cmp.Compare(c.orderOf(c.list.at(a)), c.orderOf(c.list.at(b))), strings.Compare(c.textOf(a), c.textOf(b)))
	})
	set := fpSet{text: arena{chunks: c.text.chunks[:len(c.text.chunks):len(c.text.chunks)]}, fps: make([]fingerprint, len(keep))}
	for k, i := range keep {
		cand := c.list.at(i)
		set.fps[k] = fingerprint{off: cand.off, n: cand.n, path: c.pathOf(cand)}
	}
	paths := c.paths[:len(c.paths):len(c.paths)]
	if c.drop {
		// Gone before the index is made, not after: the two were the
		// peak of a first preview's memory at 1M messages.
		*c = candidates{}
	}
	if len(keep) == 0 {
		return nil
	}
	return newDerived(set, paths, label)
}

// newDerived makes the matcher of set, whose fingerprints name paths.
func newDerived(set fpSet, paths []string, label string) *Derived {
	d := &Derived{label: label, fpSet: set, paths: paths, places: make([]string, len(paths)), win: newWindows(&set), shorter: int(set.fps[0].n)}
	for i, p := range paths {
		d.places[i] = Placeholder(p, label)
	}
	for _, f := range set.fps {
		d.shorter = min(d.shorter, int(f.n))
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
	if d == nil || len(s) < d.shorter {
		return spans
	}
	d.win.each(s, &d.fpSet, func(start int, i int32) bool {
		f := &d.fps[i]
		spans = append(spans, span{start: start, end: start + int(f.n), kind: "derived", path: d.paths[f.path], placeholder: d.places[f.path]})
		return true
	})
	return spans
}

// DerivedBuilder gathers a tier's fingerprints from a session read in
// pieces (the TUI streams long sessions from the store, and extends what it
// gathered as a session grows): Add each piece, in order; when Stale says
// so, Recheck the session from its start; then Done. Add checks the content
// the tier may read in its piece against every fingerprint gathered so far,
// but a fingerprint first met in a later piece was not checked against the
// earlier ones: Recheck does that.
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
	memo *memo
	// late leaves every check to Recheck: a Stream reads the whole
	// session again anyway once a fingerprint turns up after its first
	// batch, so checking each batch as it is added would check it twice.
	late bool
	l    layout // how each piece is shared out across cores
}

// NewDerivedBuilder starts gathering for model's tier. For a tier without
// derived = "redact" it gathers nothing and Done returns nil.
func NewDerivedBuilder(model string, p *policy.Policy) *DerivedBuilder {
	tier, _ := p.TierFor(model)
	b := &DerivedBuilder{model: model, p: p, on: tier.RedactsDerived(), l: defaultLayout}
	if tier != nil {
		b.label = tier.Label
	}
	return b
}

// Add gathers from msgs, the next messages of the session.
func (b *DerivedBuilder) Add(msgs []session.Message) {
	if !b.on || len(msgs) == 0 {
		return
	}
	gs := gatherAll(msgs, b.model, b.p, b.memo, b.l)
	added := false
	for _, g := range gs {
		for _, w := range g.withheld {
			added = b.cands.add(w.text, w.path, b.order+w.order) || added
		}
	}
	b.stale = b.stale || added && (b.order > 0 || b.late)
	if !b.late {
		b.cands.check(allowedOf(gs))
	}
	b.order += int64(len(msgs)) << 16
}

// CheckLate, on, leaves the check of each piece's readable content to
// Recheck, for pieces that are a whole session from its start: once a
// fingerprint turns up after the first, every piece is rechecked anyway,
// so checking each as it is added checks it twice (the TUI's first
// gathering at 1M messages: 2 s of CPU). With it on, any fingerprint
// makes the builder stale. Off, for pieces a session grew by, Add checks
// each.
func (b *DerivedBuilder) CheckLate(on bool) { b.late = on }

// Stale reports whether fingerprints were found after content they were
// not checked against: the pieces added so far must go through Recheck.
func (b *DerivedBuilder) Stale() bool { return b.stale }

// Recheck checks msgs, pieces of the session up to the last one added, read
// again from the start, against every fingerprint gathered. Once all of
// them have been through it, the builder is no longer stale.
func (b *DerivedBuilder) Recheck(msgs []session.Message, last bool) {
	if !b.on || len(msgs) == 0 {
		return
	}
	b.cands.check(allowedOf(gatherAll(msgs, b.model, b.p, b.memo, b.l)))
	if last {
		b.stale = false
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
