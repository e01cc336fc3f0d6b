package redact

import (
	"cmp"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strings"
	"unsafe"
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
	// A class's entries are sorted by the low 32 bits of their hash, their
	// tag, and dir[c][t] is where those whose tag's top bits (past
	// dshift) are t start: a look-up reads dir[c] and then a run of about
	// two entries side by side. (An open-addressing table of tags took a
	// slot of 8 bytes per tag at two-thirds full, as much room as the
	// entries, and the same two reads.)
	dir     [len(windowClasses)][]uint32
	dshift  [len(windowClasses)]uint
	entries []entry
	k       [len(windowClasses)]int // each class's stride (windowClasses', or less: windowBudget)
	short   []int32                 // fingerprints shorter than any window: searched for plainly
}

// entry is a window of a fingerprint filed under its hash, with the
// fingerprint's length and its first and last 4 bytes: in repetitive text
// most windows found belong to a line that is not the fingerprint, and
// those words tell without reading the fingerprint. A place in a
// fingerprint and its length fit in 16 bits (lines are taken whole up to
// maxFingerprint bytes; a longer word or value, past 65,535 bytes, is
// searched for plainly): 20 bytes an entry, where the first and last 8
// bytes and 32-bit places took 32 (measured on the 20,000-message
// benchmark session, the index was 7.8 MB, most of the memory a warm
// preview adds to show's).
type entry struct {
	tag        uint32 // the low 32 bits of the window's hash
	fp         int32  // the fingerprint
	at, n      uint16 // where the window starts in it, and its length
	head, tail uint32
}

// windowClasses are the window lengths and strides, longest first: a
// fingerprint is searched for in the first class it is long enough for
// (w+k-1 bytes). Longer windows are rarer in a text, so fewer of them are
// true anchors to check; shorter fingerprints need shorter windows and
// smaller strides. The shortest fingerprint (a value) is minValue bytes;
// one of exactly that length is searched for plainly (a stride of 1 for so
// few was more than half of all the places hashed).
var windowClasses = [...]struct{ w, k int }{{32, 8}, {24, 4}, {16, 4}, {8, 4}, {minValue, 2}}

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

func newWindows(set *fpSet) windows {
	fps := set.fps
	var w windows
	// The strides: windowClasses' own, divided by shrink for a big set.
	shrink := 1
	classOf := func(n int) (c, k int) {
		if n > math.MaxUint16 { // a word or value too long for an entry's length: searched for plainly
			return -1, 0
		}
		for c = 0; c < len(windowClasses); c++ {
			k = max(1, windowClasses[c].k/shrink)
			if n >= windowClasses[c].w+k-1 {
				return c, k
			}
		}
		return -1, 0
	}
	for ; shrink < 8; shrink *= 2 {
		n := 0
		for _, f := range fps {
			_, k := classOf(int(f.n))
			n += k
		}
		if n <= windowBudget {
			break
		}
	}
	common := newWindowCounts(set, classOf)
	// The entries, filed class by class into one slice made to measure:
	// classes appended to as they came, then copied, held the index up
	// to three times over while it was built (at 1M messages, the peak
	// of a first preview's memory).
	var at [len(windowClasses) + 1]int // where each class's entries start
	for _, f := range fps {
		if c, k := classOf(int(f.n)); c >= 0 {
			at[c+1] += k
		}
	}
	for c := range windowClasses {
		at[c+1] += at[c]
	}
	w.entries = make([]entry, at[len(windowClasses)])
	next := at
	for i, f := range fps {
		c, k := classOf(int(f.n))
		if c < 0 {
			w.short = append(w.short, int32(i))
			continue
		}
		w.k[c] = k
		b := set.bytesOf(int32(i))
		head, tail := ends(b, 0, len(b))
		from := common.rarest(b, c, k)
		for o := from; o < from+k; o++ {
			w.entries[next[c]] = entry{head: head, tail: tail, tag: uint32(windowHash(b, o, c)), fp: int32(i), at: uint16(o), n: uint16(len(b))}
			next[c]++
		}
	}
	for c := range windowClasses {
		es := w.entries[at[c]:at[c+1]]
		n := len(es)
		if n == 0 {
			continue
		}
		w.classes = append(w.classes, c)
		wbits := max(6, bits.Len(uint(filterBits*n/64)))
		w.filter[c], w.fshift[c] = make([]uint64, 1<<wbits), uint(64-wbits)
		slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(a.tag, b.tag) })
		for k := at[c]; k < at[c+1]; k++ {
			e := &w.entries[k]
			h := windowHash(set.bytesOf(e.fp), int(e.at), c)
			w.filter[c][h>>w.fshift[c]] |= filterMask(h)
		}
		dbits := max(4, bits.Len(uint(n/2)))
		w.dshift[c] = uint(32 - dbits)
		dir := make([]uint32, 1<<dbits+1)
		e := at[c]
		for t := range 1 << dbits {
			dir[t] = uint32(e)
			for e < at[c+1] && int(es[e-at[c]].tag>>w.dshift[c]) == t {
				e++
			}
		}
		dir[1<<dbits] = uint32(at[c+1])
		w.dir[c] = dir
	}
	return w
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

func newWindowCounts(set *fpSet, classOf func(int) (int, int)) windowCounts {
	total := 0
	for _, f := range set.fps {
		total += int(f.n)
	}
	bitsN := min(22, max(10, bits.Len(uint(total)))) // about a counter a byte, at most 4 MiB
	wc := windowCounts{n: make([]uint8, 1<<bitsN), mask: 1<<bitsN - 1}
	for i, f := range set.fps {
		c, _ := classOf(int(f.n))
		if c < 0 {
			continue
		}
		b := set.bytesOf(int32(i))
		for o := 0; o+windowClasses[c].w <= len(b); o++ {
			if p := &wc.n[windowHash(b, o, c)&wc.mask]; *p < math.MaxUint8 {
				*p++
			}
		}
	}
	return wc
}

// rarest is where the k windows of class c filed for fingerprint b start:
// the k consecutive places whose windows are the least common, the first
// of equals.
func (wc windowCounts) rarest(b []byte, c, k int) int {
	w := windowClasses[c].w
	last := len(b) - (w + k - 1)
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

// ends are the first and the last 4 bytes of b[start:start+n] (n >= 4).
func ends(b []byte, start, n int) (head, tail uint32) {
	le := binary.LittleEndian
	return le.Uint32(b[start:]), le.Uint32(b[start+n-4:])
}

// each calls fn with every place in s where a fingerprint of set starts,
// and the fingerprint, until fn returns false. Every occurrence is found
// once, overlapping ones too, in no particular order.
func (w *windows) each(s string, set *fpSet, fn func(start int, fp int32) bool) {
	for _, i := range w.short {
		t := set.textOf(i)
		for at := 0; ; {
			k := strings.Index(s[at:], t)
			if k < 0 {
				break
			}
			if !fn(at+k, i) {
				return
			}
			at += k + 1
		}
	}
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	for _, c := range w.classes {
		// One loop per window length, each with its hash inlined: the
		// filter turns nearly every place away, and found places are
		// checked by found.
		k, filter, fshift := w.k[c], w.filter[c], w.fshift[c]
		pass := func(h uint64) bool { m := filterMask(h); return filter[h>>fshift]&m == m }
		switch windowClasses[c].w {
		case 32:
			for i := 0; i+32 <= len(b); i += k {
				if h := hash32(b, i); pass(h) && !w.found(c, i, h, s, set, fn) {
					return
				}
			}
		case 24:
			for i := 0; i+24 <= len(b); i += k {
				if h := hash24(b, i); pass(h) && !w.found(c, i, h, s, set, fn) {
					return
				}
			}
		case 16:
			for i := 0; i+16 <= len(b); i += k {
				if h := hash16(b, i); pass(h) && !w.found(c, i, h, s, set, fn) {
					return
				}
			}
		case 8:
			for i := 0; i+8 <= len(b); i += k {
				if h := hash8(b, i); pass(h) && !w.found(c, i, h, s, set, fn) {
					return
				}
			}
		default:
			for i := 0; i+6 <= len(b); i += k {
				if h := hash6(b, i); pass(h) && !w.found(c, i, h, s, set, fn) {
					return
				}
			}
		}
	}
}

// found checks the entries of class c filed under hash h against s at i,
// the place where the window was found, and calls fn with each fingerprint
// that is there; false: fn said to stop.
func (w *windows) found(c, i int, h uint64, s string, set *fpSet, fn func(start int, fp int32) bool) bool {
	tag := uint32(h)
	t := tag >> w.dshift[c]
	dir := w.dir[c]
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	for e, last := dir[t], dir[t+1]; e < last; e++ {
		en := &w.entries[e]
		if en.tag != tag {
			if en.tag > tag {
				break
			}
			continue
		}
		start := i - int(en.at)
		if start < 0 || start+int(en.n) > len(b) {
			continue
		}
		if head, tail := ends(b, start, int(en.n)); head != en.head || tail != en.tail {
			continue
		}
		if t := set.bytesOf(en.fp); string(b[start:start+len(t)]) == string(t) && !fn(start, en.fp) {
			return false
		}
	}
	return true
}
