package redact

import (
	"cmp"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/scrim-dev/scrim/internal/cores"
)

// windows finds fingerprints in a text by hashing windows of it and looking
// each hash up among the windows of the fingerprints, Rabin–Karp fashion
// with a stride: a class of fingerprints is searched for with windows of
// one length w taken every k bytes of the text, and each of its
// fingerprints, at least w+k-1 bytes long, is filed under the k windows
// that start at k consecutive places of its middle. Wherever a fingerprint
// is in a text, exactly one of those places falls on a multiple of k, so it
// is found once, and a text is hashed at one place in k. A hash found is
// checked against what is filed under it byte for byte: a collision costs a
// comparison, never a wrong match.
//
// This replaces an Aho-Corasick automaton over 16-byte anchors. Measured on
// the million-message benchmark session (79k fingerprints): its DFA had
// 365k states in 90 MB, missed the cache at nearly every byte, and found
// 52M anchors to check, one every 6.5 bytes, in 335 MB of text: 27 s of
// CPU. Long windows make an anchor as distinctive as the fingerprint allows
// at no cost in memory (an automaton pays a state per byte of every
// anchor), the stride skips most of the text, and the filter of the filed
// hashes fits in the processor's cache.
type windows struct {
	classes []int // the classes (of windowClasses) with something filed, in order
	// For each class, two bits per hash filed, both in word h >> fshift of
	// filter (bits h%64 and h/64%64): most windows of a text are not filed,
	// and one read tells.
	filter [len(windowClasses)][]uint64
	fshift [len(windowClasses)]uint
	// A class's entries are grouped by the top bits (past dshift) of the
	// low 32 bits of their hash, and dir[c][t] is where the group t starts:
	// a look-up reads dir[c] and then a run of about two entries side by
	// side. (An open-addressing table of hashes took a slot of 8 bytes per
	// entry at two-thirds full, as much room as the entries, and the same
	// two reads.)
	dir     [len(windowClasses)][]uint32
	dshift  [len(windowClasses)]uint
	entries []entry
	k       [len(windowClasses)]int // each class's stride (windowClasses', or less: windowBudget)
	short   []int32                 // fingerprints shorter than any window: searched for plainly
	// from is, for each fingerprint, where the first window it is filed
	// under starts (windowCounts.rarest), and whether those are windows of
	// its length's class or shared ones (filedShare, shareWindows): a kept
	// gathering keeps it, so that resuming it files each the same way
	// without estimating again how common every window is. (A gathering
	// kept before windows were shared resumes as it was filed: any place
	// that fits finds the same.) Let go with the texts (fpSet.seal).
	from []uint16
	plan *windowPlan // the entries to file before the first search (ready); nil: none
	// gated: the classes searched for from shareClass's pass rather than
	// a pass of their own (see gating), in order.
	gated []int
}

// entry is a window of a fingerprint filed under its hash, with 16 more
// bits of the hash than its group tells (tag), and 16 bits made of the
// fingerprint's first and last 4 bytes (check): in repetitive text most
// windows found belong to a line that is not the fingerprint, and the check
// tells without reading the fingerprint. A place in a fingerprint and its
// length fit in 16 bits (lines are taken whole up to maxFingerprint bytes;
// a longer word or value, past 65,535 bytes, is searched for plainly): 12
// bytes an entry. (32 bits of the hash and the 8 bytes themselves took 20:
// at a million messages that withhold half their reads, 2.15M fingerprints
// filed a window each, the index was 59 MB, a third of the TUI's memory
// once counted.)
type entry struct {
	fp         int32  // the fingerprint
	tag, check uint16 // entryTag, entryCheck
	at, n      uint16 // where the window starts in it, and its length
}

// entryTag is the part of a window's hash an entry keeps: bits the group
// (the low 32) and most of the filter (the top ones) do not use.
func entryTag(h uint64) uint16 { return uint16(h >> 32) }

// entryCheck is the check of the n bytes at b[start:] (n >= 4): a hash of
// their first and last 4.
func entryCheck(b []byte, start, n int) uint16 {
	le := binary.LittleEndian
	return uint16((uint64(le.Uint32(b[start:]))<<32 | uint64(le.Uint32(b[start+n-4:]))) * hk1 >> 48)
}

// windowClasses are the window lengths and strides, longest first: a
// fingerprint is searched for in the first class it is long enough for
// (w+k-1 bytes). Longer windows are rarer in a text, so fewer of them are
// true anchors to check; shorter fingerprints need shorter windows and
// smaller strides. The shortest fingerprint (a value) is minValue bytes;
// one of exactly that length is searched for plainly (a stride of 1 for so
// few was more than half of all the places hashed). The longest windows
// are taken every 2 bytes, not 8: a fingerprint is filed under as many
// windows as its class's stride, and with the texts of a sealed set gone
// (fpSet.seal) the index is most of what a preview holds beside show's; on
// the 20k benchmark session, 21k fingerprints of about 80 bytes, the warm
// preview held 13.0-13.9 MiB with a stride of 2 against 14.0-14.7 with 4
// (three rounds, interleaved; 3.0 MB of index with 8), and at 1M messages
// the preview's time is the same within the noise (the places hashed for
// these are few beside the short classes').
var windowClasses = [...]struct{ w, k int }{{32, 2}, {24, 4}, {16, 4}, {8, 4}, {minValue, 2}}

// windowHash is the hash of the window of class c at b[i:] (in bounds): its
// top bits depend on every byte of the window, and so do its low bits,
// which pick the filter's bits.
func windowHash(b []byte, i, c int) uint64 {
	switch windowClasses[c].w {
	case 32:
		return hash32(b, i)
	case 24:
		return hash24(b, i)
	case 16:
		return hash16(b, i)
	case 8:
		return hash8(b, i)
	}
	return hash6(b, i)
}

// The hash of each window length, small enough to be inlined in the
// search's loops (measured on the million-message session: one function
// looping over a window's words, called at every place, was 0.9 s of a
// 3.9 s search).
const (
	hk1 = 0x9e3779b97f4a7c15
	hk2 = 0xbf58476d1ce4e5b9
)

func fold(h uint64) uint64 { return h ^ h>>32 }

func hash32(b []byte, i int) uint64 {
	b = b[i : i+32]
	le := binary.LittleEndian
	h := le.Uint64(b) * hk1
	h = (h ^ le.Uint64(b[8:])) * hk2
	h = (h ^ le.Uint64(b[16:])) * hk2
	return fold((h ^ le.Uint64(b[24:])) * hk2)
}

func hash24(b []byte, i int) uint64 {
	b = b[i : i+24]
	le := binary.LittleEndian
	h := le.Uint64(b) * hk1
	h = (h ^ le.Uint64(b[8:])) * hk2
	return fold((h ^ le.Uint64(b[16:])) * hk2)
}

func hash16(b []byte, i int) uint64 {
	b = b[i : i+16]
	le := binary.LittleEndian
	h := le.Uint64(b) * hk1
	return fold((h ^ le.Uint64(b[8:])) * hk2)
}

func hash8(b []byte, i int) uint64 {
	return fold(binary.LittleEndian.Uint64(b[i:i+8]) * hk1)
}

func hash6(b []byte, i int) uint64 {
	b = b[i : i+6]
	le := binary.LittleEndian
	return fold((uint64(le.Uint32(b)) | uint64(le.Uint16(b[4:]))<<32 | 6<<56) * hk1)
}

// windowBudget bounds the entries filed (20 bytes each): a set of
// fingerprints that would file more, a long session's thousands of withheld
// lines, is filed with smaller strides, down to one window each. The search
// then hashes more places of a text, but the index stays within about
// 32 MiB however much is withheld (measured: a 300,000-message session with
// half its reads denied, 360k fingerprints, filed 2.9M windows at full
// strides, 92 MB).
var windowBudget = 1 << 20 // a variable for tests

func newWindows(set *fpSet, from []uint16) windows {
	w := planWindows(set, from)
	w.ready(set)
	return w
}

// windowPlan is what filing a planned index's entries needs (planWindows):
// how many entries each class gets and where its entries start, and where
// each fingerprint's are.
type windowPlan struct {
	gating bool
	once   sync.Once
	at     [len(windowClasses) + 1]int // where each class's entries start
	shared []int                       // by range: entries under windows the words have
	ranges [][2]int
	place  func(i int) (c, k, o int)
}

// ready files the entries of w's plan, once: every search does so before
// it looks, and so does Seal, which lets go of the texts filing hashes.
func (w *windows) ready(set *fpSet) {
	if p := w.plan; p != nil {
		p.once.Do(func() { w.file(set, p) })
	}
}

// planWindows is newWindows up to filing the entries, which the first
// search does (ready): a kept gathering is encoded with where each
// fingerprint's windows start (from), and encoded and stored before the
// entries are made, its record is not held beside them. That was the peak
// of a first preview's memory at a million messages (the record, 17.7 MB,
// with the index, 14.5 MB, and the texts both index). A planned windows
// must not be copied before it is ready.
func planWindows(set *fpSet, from []uint16) windows {
	fps := set.fps
	var w windows
	// The strides: windowClasses' own, divided by shrink for a big set,
	// the first of 1, 2 and 4 whose entries fit the budget, else 8. What
	// each would file is counted in one pass on every core: a pass a
	// shrink on one core was 0.06 s of the UI benchmark's first count
	// while the other core waited.
	shrink, shift := 1, uint(0)
	stride := func(c int) int { return max(1, windowClasses[c].k/shrink) }
	classOf := func(n int) (c, k int) { return classAt(n, shift) }
	ranges := fpRanges(len(fps))
	filed := make([][3]int, len(ranges))
	eachRange(ranges, func(r, lo, hi int) {
		var n [3]int
		for i := lo; i < hi; i++ {
			l := set.lenOf(int32(i))
			for s := range n {
				_, k := classAt(l, uint(s))
				n[s] += k
			}
		}
		filed[r] = n
	})
	for s := 0; shrink < 8; s, shrink, shift = s+1, shrink*2, shift+1 {
		n := 0
		for r := range filed {
			n += filed[r][s]
		}
		if n <= windowBudget {
			break
		}
	}
	// Where each fingerprint's windows start (windowCounts.rarest, unless
	// from, a kept gathering's, says: a resumed gathering does not count
	// its windows again, whose table was the peak of a warm preview's
	// memory on the 20k benchmark session, 2 of 14.5 MiB), and how many
	// entries each class gets. What follows runs on every core, each on a
	// range of the fingerprints: on the UI benchmark's million-message
	// session (2.15M fingerprints) the index took 1.5 s on one, while the
	// TUI's first count waited for it.
	//
	// A fingerprint is filed in the class of its length (classOf), unless
	// its from says it shares windows (filedShare): then in shareClass.
	place := func(i int) (c, k, o int) {
		n := set.lenOf(int32(i))
		c, k = classOf(n)
		o = int(from[i])
		if c >= 0 && sharing(n, from[i]) {
			c, k, o = shareClass, stride(shareClass), o&^filedShare
		}
		return c, k, o
	}
	//
	// Over the budget, the longer fingerprints' windows are counted and
	// their places decided once shareWindows has filed those it can with
	// the words: a line filed there needs neither (the two were half of
	// the index's time on the 2.15M fingerprints of BenchmarkMatcher).
	var common windowCounts
	fresh := !fitsWindows(set, from, place)
	share := fresh && shrink > 1
	gating := stride(shareClass) == 1
	if fresh {
		from, common = make([]uint16, len(fps)), newWindowCounts(set)
		common.count(set, classOf, func(_, c int) bool { return !share || c >= shareClass })
	}
	shorts := make([][]int32, len(ranges))
	eachRange(ranges, func(r int, lo, hi int) {
		for i := lo; i < hi; i++ {
			c, k := classOf(set.lenOf(int32(i)))
			if c < 0 {
				shorts[r] = append(shorts[r], int32(i))
			} else if common.n != nil && (!share || c >= shareClass) {
				b := set.bytesOf(int32(i))
				from[i] = uint16(common.rarest(b, c, k, len(b)-(windowClasses[c].w+k-1)))
			}
		}
	})
	if share {
		shareWindows(set, from, classOf, stride(shareClass), ranges)
		if gating {
			// A gated fingerprint is found where its first 8 bytes
			// pass the gate: its window starts at its rarest 8 bytes.
			common.count(set, eightOf(classOf), func(i, _ int) bool {
				c, _ := classOf(set.lenOf(int32(i)))
				return c >= 0 && c < shareClass && from[i]&filedShare == 0
			})
		} else {
			common.count(set, classOf, func(i, c int) bool { return c < shareClass && from[i]&filedShare == 0 })
		}
	}
	counts := make([][len(windowClasses) + 1]int, len(ranges))
	shared := make([]int, len(ranges)) // entries under windows the words have
	eachRange(ranges, func(r int, lo, hi int) {
		var n [len(windowClasses) + 1]int // not counts[r]: its cache line is its neighbours' too
		s := 0
		for i := lo; i < hi; i++ {
			c, k, _ := place(i)
			if share && c >= 0 && c < shareClass { // not shared
				if b := set.bytesOf(int32(i)); gating {
					from[i] = uint16(common.rarest(b, shareClass, 1, len(b)-windowClasses[c].w))
				} else {
					from[i] = uint16(common.rarest(b, c, k, len(b)-(windowClasses[c].w+k-1)))
				}
			}
			if c == shareClass && sharing(set.lenOf(int32(i)), from[i]) {
				s += k
			}
			if c >= 0 {
				n[c+1] += k
			}
		}
		counts[r], shared[r] = n, s
	})
	p := &windowPlan{shared: shared, ranges: ranges, place: place}
	at := &p.at
	for r := range ranges {
		w.short = append(w.short, shorts[r]...)
		for c := range windowClasses {
			at[c+1] += counts[r][c+1]
		}
	}
	for c := range windowClasses {
		if at[c+1] > 0 {
			w.k[c] = stride(c)
			if gating && c < shareClass {
				w.gated = append(w.gated, c)
			}
		}
		at[c+1] += at[c]
	}
	if len(w.gated) > 0 {
		// shareClass's pass runs for the gate, whatever it holds.
		p.gating, w.k[shareClass] = true, stride(shareClass)
	} else {
		w.gated = nil
	}
	w.from, w.plan = from, p
	return w
}

// Gating. Over the budget, at the smallest strides (shareClass's is 1:
// every place of a text is hashed), each class with something filed is a
// pass over the whole text, and each place a pass looks at costs a read of
// its filter whatever the filter's size. shareClass's pass hashes the 8
// bytes at every place; a fingerprint of a longer class is filed, as ever,
// under its own window, but one that starts with its rarest 8 bytes
// (rarest), and two more bits for those 8 bytes (gateMask) go in the
// word of shareClass's filter the place reads anyway: the longer classes'
// windows are hashed and looked up only where a text's 8 bytes pass that
// gate, in shareClass's pass, and they have no pass of their own. On the
// UI benchmark's million-message session, whose lines hold words of their
// own (shareWindows), 86k lines were left in the 32-byte class, and its
// pass was 0.47 of the first count's 1.19 CPU-s of search; a gate of its
// own, a second read at every place, cost 0.43 of them. Where the gate's 8
// bytes are common in the texts searched, the longer window is hashed at
// each place they are, as every place was before: at worst a longer class
// costs what its pass did. (Filed in shareClass itself under 8 bytes of
// their own, every place of a text with those 8 bytes was a match to check:
// BenchmarkMatcherSearchVocabulary, held over the budget, took three times
// as long, its lines' rarest 8 bytes common words.)

// eightOf is classOf, but the classes longer than shareClass's are
// shareClass at a stride of 1: their windows counted by their 8 bytes, for
// rarest.
func eightOf(classOf func(int) (int, int)) func(int) (int, int) {
	return func(n int) (int, int) {
		if c, k := classOf(n); c < 0 || c >= shareClass {
			return c, k
		}
		return shareClass, 1
	}
}

// classAt is the class a fingerprint n bytes long is filed in, with the
// strides divided by 1<<shift (shift 0 to 3), and the stride: the class of
// the longest windows of which it has a stride's worth; -1 for one searched
// for plainly (shorter than any, or too long for an entry's length).
//
// Asked four times of every fingerprint as an index is planned (2.26M at a
// million messages), a loop over the classes with a division at each was
// 0.17 s of the TUI's first count: lengths up to 63 are read from a table,
// and a longer fingerprint is in the first class at any stride.
func classAt(n int, shift uint) (c, k int) {
	if n < len(classTable[0]) {
		e := classTable[shift&3][n]
		return int(e.c), int(e.k)
	}
	if n > math.MaxUint16 {
		return -1, 0
	}
	return 0, max(1, windowClasses[0].k>>shift)
}

// classSearch is classAt worked out.
func classSearch(n int, shift uint) (c, k int) {
	for c = 0; c < len(windowClasses); c++ {
		k = max(1, windowClasses[c].k>>shift)
		if n >= windowClasses[c].w+k-1 {
			return c, k
		}
	}
	return -1, 0
}

// classTable is classSearch for lengths up to 63 at each shift: past the
// longest windows and their widest stride (33 bytes), where a fingerprint
// is in the first class (TestClassTable).
var classTable = func() (t [4][64]struct{ c, k int8 }) {
	for s := range t {
		for n := range t[s] {
			c, k := classSearch(n, uint(s))
			t[s][n].c, t[s][n].k = int8(c), int8(k)
		}
	}
	return t
}()

// file makes the entries planned by p, and the filter and groups that find
// them. The entries are placed group by group into one slice made to
// measure (a counting sort): each class's groups counted first, then each
// entry put where its group's next one goes, and each group put in order of
// fingerprint and place, as one core would have filed them. Sorting them
// took a comparison of hashes at every step, and filing them as they came
// and copying held the index up to three times over while it was built (at
// 1M messages, the peak of a first preview's memory).
func (w *windows) file(set *fpSet, p *windowPlan) {
	at, shared, ranges, place := &p.at, p.shared, p.ranges, p.place
	w.entries = make([]entry, at[len(windowClasses)])
	each := func(fn func(c int, h uint64, e entry)) {
		eachRange(ranges, func(_ int, lo, hi int) {
			for i := lo; i < hi; i++ {
				c, k, at := place(i)
				if c < 0 {
					continue
				}
				b := set.bytesOf(int32(i))
				check := entryCheck(b, 0, len(b))
				for o := at; o < at+k; o++ {
					h := windowHash(b, o, c)
					fn(c, h, entry{fp: int32(i), tag: entryTag(h), check: check, at: uint16(o), n: uint16(len(b))})
				}
			}
		})
	}
	for c := range windowClasses {
		n := at[c+1] - at[c]
		if n == 0 && !(p.gating && c == shareClass) {
			continue
		}
		w.classes = append(w.classes, c)
		// The filter and the groups are made to the measure of the hashes
		// the class holds: the windows shared with the words add none
		// (shareWindows), only entries to the words' groups.
		hashes := n
		if c == shareClass {
			for _, s := range shared {
				hashes -= s
			}
			if p.gating { // the gate's bits are in shareClass's filter
				for _, g := range w.gated {
					hashes += at[g+1] - at[g]
				}
			}
		}
		wbits := max(6, bits.Len(uint(filterBits*hashes/64)))
		w.filter[c], w.fshift[c] = make([]uint64, 1<<wbits), uint(64-wbits)
		dbits := max(4, bits.Len(uint(hashes/2)))
		w.dshift[c] = uint(32 - dbits)
		w.dir[c] = make([]uint32, 1<<dbits+1)
	}
	group := func(c int, h uint64) uint32 { return uint32(h) >> w.dshift[c] }
	each(func(c int, h uint64, _ entry) {
		atomic.AddUint32(&w.dir[c][group(c, h)+1], 1)
		atomic.OrUint64(&w.filter[c][h>>w.fshift[c]], filterMask(h))
	})
	if p.gating {
		filter, fshift := w.filter[shareClass], w.fshift[shareClass]
		eachRange(ranges, func(_ int, lo, hi int) {
			for i := lo; i < hi; i++ {
				if c, _, o := place(i); c >= 0 && c < shareClass {
					h := hash8(set.bytesOf(int32(i)), o)
					atomic.OrUint64(&filter[h>>fshift], gateMask(h))
				}
			}
		})
	}
	for _, c := range w.classes {
		dir := w.dir[c]
		dir[0] = uint32(at[c])
		for t := 1; t < len(dir); t++ {
			dir[t] += dir[t-1]
		}
	}
	next := make([][]uint32, len(windowClasses))
	for _, c := range w.classes {
		next[c] = slices.Clone(w.dir[c])
	}
	each(func(c int, h uint64, e entry) {
		w.entries[atomic.AddUint32(&next[c][group(c, h)], 1)-1] = e
	})
	if len(ranges) > 1 {
		for _, c := range w.classes {
			dir := w.dir[c]
			eachRange(groupRanges(len(dir)-1, len(ranges)), func(_ int, lo, hi int) {
				for t := lo; t < hi; t++ {
					if g := w.entries[dir[t]:dir[t+1]]; len(g) > 1 {
						slices.SortFunc(g, func(a, b entry) int { return cmp.Or(cmp.Compare(a.fp, b.fp), cmp.Compare(a.at, b.at)) })
					}
				}
			})
		}
	}
	p.shared, p.ranges, p.place = nil, nil, nil
}

// fitsWindows reports whether from, given with a kept gathering, says for
// each fingerprint of set a place its windows fit in (place reads it): one
// a core decided, or a gathering damaged in a way its reading does not
// tell.
func fitsWindows(set *fpSet, from []uint16, place func(i int) (c, k, o int)) bool {
	if len(from) != len(set.fps) {
		return false
	}
	for i := range from {
		if c, k, o := place(i); c >= 0 && o+k-1+windowClasses[c].w > set.lenOf(int32(i)) {
			return false
		}
	}
	return true
}

// Over windowBudget every class hashes a text at every place it can, and
// each class with something filed costs a pass over the whole text, most of
// it a read of the class's filter that misses the processor's cache (at
// 2.15M fingerprints, 4 MiB a class). A fingerprint longer than shareClass's
// windows that holds windows a fingerprint of shareClass is filed under (a
// withheld line and the key or identifier it names) is filed in shareClass
// under the same windows: its entries add no bit to that class's filter,
// and the longer class is left with little to search for, in a filter that
// fits the cache. Its from then says so (filedShare); the windows are found
// exactly as any others, so what is found does not change, only where it is
// looked up. Measured on the UI benchmark's million-message session, 1.2M
// lines of which most hold a word of their own: see shareWindows.
const (
	shareClass = 3       // windowClasses' 8-byte windows (hash8)
	filedShare = 1 << 15 // in a from: filed in shareClass, that far less in (fingerprints shorter than this only)
)

// sharing reports whether from, a fingerprint of n bytes' from, says it is
// filed under shared windows (a longer one's from may be past filedShare).
func sharing(n int, from uint16) bool { return n < filedShare && from&filedShare != 0 }

// shareWindows marks in from each fingerprint that can share windows
// (filedShare, with where its first one starts): the first place of it
// where k consecutive windows of shareClass are windows the fingerprints of
// shareClass are filed under. Those are told by a table of 32 bits of each
// one's hash: a window of other bytes that has the same is filed all the
// same, which finds as much, in a bit or two of the class's filter more.
// (A filter of them alone let through 1.4 % of the others, and the first
// place of a line that passed was often one every line has, "func ste".)
func shareWindows(set *fpSet, from []uint16, classOf func(int) (int, int), k int, ranges [][2]int) {
	n := 0
	for i := range set.fps {
		if c, _ := classOf(set.lenOf(int32(i))); c == shareClass {
			n += k
		}
	}
	if n == 0 {
		return
	}
	// Open addressing, at most two-thirds full (8 MiB for the UI
	// benchmark's 1.08M words, made and let go while the index is made):
	// the slot from the hash's low bits, the key its top 32 with the
	// lowest set (0 is an empty slot).
	table := make([]uint32, 1<<bits.Len(uint(n+n/2)))
	mask := uint64(len(table) - 1)
	key := func(h uint64) uint32 { return uint32(h>>32) | 1 }
	eachRange(ranges, func(_ int, lo, hi int) {
		for i := lo; i < hi; i++ {
			b := set.bytesOf(int32(i))
			if c, _ := classOf(len(b)); c != shareClass {
				continue
			}
			for o := int(from[i]); o < int(from[i])+k; o++ {
				h := hash8(b, o)
				for t := h & mask; ; t = (t + 1) & mask {
					if atomic.CompareAndSwapUint32(&table[t], 0, key(h)) || atomic.LoadUint32(&table[t]) == key(h) {
						break
					}
				}
			}
		}
	})
	filed := func(h uint64) bool {
		for t := h & mask; table[t] != 0; t = (t + 1) & mask {
			if table[t] == key(h) {
				return true
			}
		}
		return false
	}
	eachRange(ranges, func(_ int, lo, hi int) {
		for i := lo; i < hi; i++ {
			b := set.bytesOf(int32(i))
			if c, _ := classOf(len(b)); c < 0 || c >= shareClass || len(b) >= filedShare {
				continue
			}
			run := 0
			for o := 0; o+8 <= len(b); o++ {
				if !filed(hash8(b, o)) {
					run = 0
				} else if run++; run == k {
					from[i] = uint16(o-k+1) | filedShare
					break
				}
			}
		}
	})
}

// fpRanges cuts n fingerprints into a range a core (cores.Free: one core
// fewer while the user is at the TUI's keys), of fpRangeMin at least (one
// range for a small set: not worth a goroutine).
func fpRanges(n int) [][2]int {
	return groupRanges(n, min(cores.Free(), max(1, n/fpRangeMin)))
}

var fpRangeMin = 1 << 14 // a variable for tests

// groupRanges cuts n into parts ranges of about equal length.
func groupRanges(n, parts int) [][2]int {
	out := make([][2]int, parts)
	for r := range out {
		out[r] = [2]int{n * r / parts, n * (r + 1) / parts}
	}
	return out
}

// eachRange runs fn on every range at once, r its number, and returns when
// all are done.
func eachRange(ranges [][2]int, fn func(r, lo, hi int)) {
	var wg sync.WaitGroup
	for r, rg := range ranges[1:] {
		wg.Go(func() { fn(r+1, rg[0], rg[1]) })
	}
	fn(0, ranges[0][0], ranges[0][1])
	wg.Wait()
}

// windowCounts estimates how many windows of the fingerprints, at every
// place of each, have each hash: a window common among them is common in
// the texts searched too (a word that many withheld lines share, a run of
// indentation), and each time a text has a window that is filed, found
// checks it. Measured on the million-message benchmark session, with the
// k windows filed from each fingerprint's middle: 24.7M windows of the
// text were filed, 67M entries checked for 369k matches, most of them for
// the fingerprints of 12 to 26 bytes, whose 8- and 16-byte windows are
// within a word or two. Counts are saturating, in a table of fixed size
// shared by colliding hashes: an estimate from above.
type windowCounts struct {
	n    []uint8
	mask uint64
}

// newWindowCounts makes the table for set's windows, with none counted.
func newWindowCounts(set *fpSet) windowCounts {
	ranges := fpRanges(len(set.fps))
	totals := make([]int, len(ranges))
	eachRange(ranges, func(r, lo, hi int) {
		n := 0
		for i := lo; i < hi; i++ {
			n += set.lenOf(int32(i))
		}
		totals[r] = n
	})
	total := 0
	for _, n := range totals {
		total += n
	}
	// About a counter for every 4 bytes of the fingerprints, at most 4 MiB.
	// A counter a byte was 2 of the 4 MiB a first preview of the 20,000-
	// message benchmark session added at its peak, where the fingerprints
	// are made and their gathering encoded; a table a quarter the size
	// adds about 4 to every count from windows that share a counter, which
	// the windows common enough to avoid stand well above.
	bitsN := min(22, max(10, bits.Len(uint(total))-2))
	return windowCounts{n: make([]uint8, 1<<bitsN), mask: 1<<bitsN - 1}
}

// count counts the windows of class classOf gives of each fingerprint i of
// set that which(i, its class) picks. Each core counts a range of the
// fingerprints, the first into wc's table, the others into tables of their
// own that are then added in; a saturating count comes out the same in any
// order. On one core, the two counts of the UI benchmark's million-message
// session were 0.13 s of its first count while the other core waited.
func (wc windowCounts) count(set *fpSet, classOf func(int) (int, int), which func(i, c int) bool) {
	ranges := fpRanges(len(set.fps))
	tables := make([][]uint8, len(ranges))
	eachRange(ranges, func(r, lo, hi int) {
		n := wc.n
		if r > 0 {
			n = make([]uint8, len(wc.n))
			tables[r] = n
		}
		for i := lo; i < hi; i++ {
			b := set.bytesOf(int32(i))
			c, _ := classOf(len(b))
			if c < 0 || !which(i, c) {
				continue
			}
			for o := 0; o+windowClasses[c].w <= len(b); o++ {
				if p := &n[windowHash(b, o, c)&wc.mask]; *p < math.MaxUint8 {
					*p++
				}
			}
		}
	})
	for _, n := range tables[1:] {
		for h, k := range n {
			wc.n[h] = uint8(min(int(wc.n[h])+int(k), math.MaxUint8))
		}
	}
}

// rarest is where, at or before last, the k windows of class c filed for
// fingerprint b start: the k consecutive places whose windows are the least
// common, the first of equals. (A gated fingerprint's window starts at its
// rarest 8 bytes: class shareClass, k 1, last where its own window still
// fits.)
func (wc windowCounts) rarest(b []byte, c, k, last int) int {
	count := func(o int) int { return int(wc.n[windowHash(b, o, c)&wc.mask]) }
	sum := 0
	for o := range k {
		sum += count(o)
	}
	best, at := sum, 0
	for o := 1; o <= last; o++ {
		sum += count(o+k-1) - count(o-1)
		if sum < best {
			best, at = sum, o
		}
	}
	return at
}

// filterBits is the filter's size in bits per window filed: with two bits
// set for each, about 3 % of the windows not filed pass it.
const filterBits = 16

func filterMask(h uint64) uint64 { return 1<<(h%64) | 1<<(h/64%64) }

// gateMask is the gate's two bits for an 8-byte window's hash h (gating),
// in the word of shareClass's filter that filterMask's are in: a place of
// a text is one read, for both. They are of other bits of h than
// filterMask's and the word's own (its top ones).
func gateMask(h uint64) uint64 { return 1<<(h>>12%64) | 1<<(h>>18%64) }

// each calls fn with every place in s where a fingerprint of set starts,
// its length, and the fingerprint, until fn returns false. Every occurrence is found
// once, overlapping ones too, in no particular order.
func (w *windows) each(s string, set *fpSet, fn func(start, n int, fp int32) bool) {
	w.ready(set)
	for _, i := range w.short {
		t := set.textOf(i)
		for at := 0; ; {
			k := strings.Index(s[at:], t)
			if k < 0 {
				break
			}
			if !fn(at+k, len(t), i) {
				return
			}
			at += k + 1
		}
	}
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	var q foundQueue
	for _, c := range w.classes {
		if c < shareClass && w.gated != nil {
			continue // searched for in shareClass's pass
		}
		if windowClasses[c].w == 8 && w.gated != nil {
			if !w.eachGated(b, s, set, &q, fn) {
				return
			}
			continue
		}
		// The filter turns nearly every place away (passing, a loop of
		// its own); the places that pass are queued and checked by found.
		k, n, filter, fshift := w.k[c], windowClasses[c].w, w.filter[c], w.fshift[c]
		for i, h := passing(b, 0, c, k, filter, fshift); i+n <= len(b); i, h = passing(b, i+k, c, k, filter, fshift) {
			if q.add(i, h) && !w.found(c, &q, s, set, fn) {
				return
			}
		}
		if q.n > 0 && !w.found(c, &q, s, set, fn) {
			return
		}
	}
}

// eachGated is each's pass of shareClass when classes are gated: at every
// place of b (s), the 8 bytes' hash looked up in shareClass's filter and
// in the gate, and where the gate lets it through, each gated class's
// window there in its class's filter. False: fn said to stop.
func (w *windows) eachGated(b []byte, s string, set *fpSet, q *foundQueue, fn func(start, n int, fp int32) bool) bool {
	filter, fshift := w.filter[shareClass], w.fshift[shareClass]
	// One queue for the gated classes' places, of class gc: a text
	// rarely has any, and a queue of each class's, made for every text,
	// was as much to clear as a short text is long.
	var gq *foundQueue
	gc := -1
	for i, h := passing8(b, 0, filter, fshift); i+8 <= len(b); i, h = passing8(b, i+1, filter, fshift) {
		x, m := filter[h>>fshift], filterMask(h)
		if x&m == m && q.add(i, h) && !w.found(shareClass, q, s, set, fn) {
			return false
		}
		if g := gateMask(h); x&g != g {
			continue
		}
		for _, c := range w.gated {
			if i+windowClasses[c].w > len(b) {
				continue
			}
			hc := windowHash(b, i, c)
			if mc := filterMask(hc); w.filter[c][hc>>w.fshift[c]]&mc != mc {
				continue
			}
			if gq == nil {
				gq = new(foundQueue)
			} else if gc != c && gq.n > 0 && !w.found(gc, gq, s, set, fn) {
				return false
			}
			gc = c
			if gq.add(i, hc) && !w.found(c, gq, s, set, fn) {
				return false
			}
		}
	}
	if q.n > 0 && !w.found(shareClass, q, s, set, fn) {
		return false
	}
	return gq == nil || gq.n == 0 || w.found(gc, gq, s, set, fn)
}

// passing8 is the first place of b from from on whose 8 bytes' hash h
// passes filter's bits or the gate's, and h; past len(b)-8 if none. It is
// a loop of its own, which calls nothing, over four places a step. In
// eachGated's loop, beside the queue's lookups and the gated classes, the
// compiler kept none of the loop's values in registers across a step (a
// byte searched was about 50 instructions, most of them moving values to
// and from the stack), and each place's read of the filter, a cache miss
// in a filter of megabytes, was one after the other.
func passing8(b []byte, from int, filter []uint64, fshift uint) (int, uint64) {
	sh := fshift & 63
	passes := func(x, h uint64) bool {
		m, g := filterMask(h), gateMask(h)
		return x&m == m || x&g == g
	}
	i := from
	// Four places a step, the filter's words for all four read before
	// any is looked at: reads that do not wait for each other.
	for ; i+11 <= len(b); i += 4 {
		w := b[i : i+11]
		h0, h1 := fold(binary.LittleEndian.Uint64(w)*hk1), fold(binary.LittleEndian.Uint64(w[1:])*hk1)
		h2, h3 := fold(binary.LittleEndian.Uint64(w[2:])*hk1), fold(binary.LittleEndian.Uint64(w[3:])*hk1)
		x0, x1, x2, x3 := filter[h0>>sh], filter[h1>>sh], filter[h2>>sh], filter[h3>>sh]
		switch {
		case passes(x0, h0):
			return i, h0
		case passes(x1, h1):
			return i + 1, h1
		case passes(x2, h2):
			return i + 2, h2
		case passes(x3, h3):
			return i + 3, h3
		}
	}
	for ; i+8 <= len(b); i++ {
		if h := hash8(b, i); passes(filter[h>>sh], h) {
			return i, h
		}
	}
	return i, 0
}

// passing is the first place of b from from on, and every k bytes after,
// whose window of class c has a hash h (windowHash) that passes filter's
// bits, and h; past the last place a window fits if none. Each class's
// loop calls nothing: with the queue's lookups in its body (each), the
// compiler kept the loop's values on the stack across its steps.
func passing(b []byte, from, c, k int, filter []uint64, fshift uint) (int, uint64) {
	sh := fshift & 63
	passes := func(h uint64) bool { m := filterMask(h); return filter[h>>sh]&m == m }
	i := from
	switch windowClasses[c].w {
	case 32:
		for ; i+32 <= len(b); i += k {
			if h := hash32(b, i); passes(h) {
				return i, h
			}
		}
	case 24:
		for ; i+24 <= len(b); i += k {
			if h := hash24(b, i); passes(h) {
				return i, h
			}
		}
	case 16:
		for ; i+16 <= len(b); i += k {
			if h := hash16(b, i); passes(h) {
				return i, h
			}
		}
	case 8:
		for ; i+8 <= len(b); i += k {
			if h := hash8(b, i); passes(h) {
				return i, h
			}
		}
	default:
		for ; i+6 <= len(b); i += k {
			if h := hash6(b, i); passes(h) {
				return i, h
			}
		}
	}
	return i, 0
}

// foundQueue holds the places of a text whose windows passed a class's
// filter, to be looked up together (found). Looked up one at a time, each
// place read its group's bounds and then its entries, two reads that miss
// the cache one after the other; over a queue's places the reads of one
// step do not wait for each other, and the processor overlaps them. On
// BenchmarkMatcherSearchVocabulary (mostly windows found that are filed
// for other lines), 103 -> 113 MB/s, on BenchmarkMatcherSearch 105 -> 118
// (medians of eight runs each, interleaved).
type foundQueue struct {
	at [32]int
	h  [32]uint64
	n  int
}

// add queues a place; true: the queue is full.
func (q *foundQueue) add(i int, h uint64) bool {
	q.at[q.n], q.h[q.n] = i, h
	q.n++
	return q.n == len(q.at)
}

// found checks the entries of class c filed under the hash of each place
// queued in q against s there, and calls fn with each fingerprint that is
// there; false: fn said to stop. It empties q.
func (w *windows) found(c int, q *foundQueue, s string, set *fpSet, fn func(start, n int, fp int32) bool) bool {
	n := q.n
	q.n = 0
	dir, shift := w.dir[c], w.dshift[c]
	var lo, hi [len(q.at)]uint32
	for j := range n {
		t := uint32(q.h[j]) >> shift
		lo[j], hi[j] = dir[t], dir[t+1]
	}
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	for j := range n {
		tag, i := entryTag(q.h[j]), q.at[j]
		for e := lo[j]; e < hi[j]; e++ {
			en := &w.entries[e]
			if en.tag != tag {
				continue
			}
			start := i - int(en.at)
			if start < 0 || start+int(en.n) > len(b) || entryCheck(b, start, int(en.n)) != en.check {
				continue
			}
			if set.is(en.fp, b[start:start+int(en.n)]) && !fn(start, int(en.n), en.fp) {
				return false
			}
		}
	}
	return true
}
