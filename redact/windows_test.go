package redact

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// FuzzWindows holds the window matcher to a plain search: for fingerprints
// cut from the fuzzer's text (every class of length, repeated and
// overlapping ones), match finds each occurrence of each, exactly once,
// at full strides and at the smallest (a set over windowBudget), with the
// texts and sealed (Derived.Seal).
func FuzzWindows(f *testing.F) {
	f.Add("KEY_1=abcdefgh\nKEY_2=abcdefgh\n", "the value abcdefgh and KEY_1=abcdefgh", uint8(3))
	f.Add(strings.Repeat("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", 2), strings.Repeat("a", 200), uint8(1))
	f.Add("func openVault(masterKeyMaterial string) error {\n\treturn nil\n}\nsix666\n", "x func openVault(masterKeyMaterial string) error {y six666 openVault(masterKeyMaterial", uint8(5))
	f.Add("func openVault(masterKeyMaterial string) error {\n\treturn nil\n}\nsix666\n", "x func openVault(masterKeyMaterial string) error {y six666 openVault(masterKeyMaterial", uint8(6))
	f.Fuzz(func(t *testing.T, pieces, hay string, cut uint8) {
		// Fingerprints: each line of pieces, and pieces of it cut at a
		// few lengths, so that lengths on both sides of every class's
		// bound come up.
		seen := map[string]bool{}
		var fps []string
		add := func(s string) {
			if len(s) >= minValue && !seen[s] {
				seen[s] = true
				fps = append(fps, s)
			}
		}
		for line := range strings.SplitSeq(pieces, "\n") {
			add(line)
			for _, c := range windowClasses {
				if n := c.w + c.k - 1 - int(cut%3); n > 0 && n <= len(line) {
					add(line[:n])
					add(line[len(line)-n:])
				}
			}
		}
		if len(fps) == 0 {
			return
		}
		if cut%2 == 1 {
			overBudget(t) // filed with smaller strides
		}
		d := derivedOfTexts(fps, "x")
		if cut%4 >= 2 {
			d.Seal() // found by their hashes, the plain ones by their texts
		}
		got := map[[2]int]int{}
		for _, sp := range d.match(hay, nil) {
			got[[2]int{sp.start, sp.end}]++
		}
		want := map[[2]int]int{}
		for _, f := range fps {
			for at := 0; ; {
				i := strings.Index(hay[at:], f)
				if i < 0 {
					break
				}
				want[[2]int{at + i, at + i + len(f)}]++
				at += i + 1
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("fingerprints %q in %q: got %v, want %v", fps, hay, got, want)
		}
	})
}

// TestLinesShareTheirWordsWindows: over the budget, a line that holds a
// word that is a fingerprint of its own is filed under the word's windows,
// in shareClass, so the class of the line's length has nothing left to
// search for; a line without one stays in its class; under the budget
// nothing moves; and each is found where it is, once.
func TestLinesShareTheirWordsWindows(t *testing.T) {
	var texts []string
	for i := range 2000 {
		texts = append(texts, fmt.Sprintf("func step%d_%d(x int) int { return x*%d }", 1000+i, i%12, i%7), fmt.Sprintf("step%d_%d", 1000+i, i%12))
	}
	texts = append(texts, "a line that holds no word of its own, #1")
	if windowClasses[shareClass].w != 8 {
		t.Fatalf("shareClass has windows of %d bytes; shareWindows hashes 8", windowClasses[shareClass].w)
	}
	set := listOf(texts).fpSet
	under := newWindows(&set, nil)
	for i, o := range under.from {
		if o&filedShare != 0 {
			t.Fatalf("under the budget, %q shares windows", texts[i])
		}
	}
	overBudget(t)
	w := newWindows(&set, nil)
	words := map[uint64]bool{}
	for _, e := range w.filed(shareClass) {
		if e.fp%2 == 1 {
			words[e.tag] = true
		}
	}
	for _, e := range w.filed(shareClass) {
		if e.fp%2 == 0 && !words[e.tag] {
			t.Fatalf("%q is filed under a window no word is", texts[e.fp])
		}
	}
	if got := w.filed(0); len(got) != 1 || got[0].fp != int32(len(texts)-1) {
		t.Fatalf("class %d holds %d entries, want the line without a word alone", 0, len(got))
	}
	hay := "x " + texts[20] + " y " + texts[41] + " " + texts[len(texts)-1]
	var got [][2]int
	w.each(hay, &set, func(start, n int, fp int32) bool {
		got = append(got, [2]int{start, int(fp)})
		return true
	})
	slices.SortFunc(got, func(a, b [2]int) int { return a[0]*10000 + a[1] - b[0]*10000 - b[1] })
	want := [][2]int{{2, 20}, {7, 21}, {strings.Index(hay, texts[41]), 41}, {strings.LastIndex(hay, texts[len(texts)-1]), len(texts) - 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("found %v, want %v", got, want)
	}
}

// TestWindowsFiledWhereFingerprintsDiffer: fingerprints that share a long
// middle (generated lines, a common idiom) are filed under windows that
// take in what each has of its own, as far as their length allows, so a
// text holding the middle does not have every one of them checked.
func TestWindowsFiledWhereFingerprintsDiffer(t *testing.T) {
	// Of the 16 windows of 32 bytes of these 47 bytes, the 8 within the
	// middle are in every one of them; the others take in some of each
	// one's own bytes, and at least half of the k filed must be those.
	const middle = "shared-middle-part-of-the-value:0123456"
	var fps []string
	for i := range 40 {
		own := strings.Repeat(string(rune('A'+i)), 4)
		fps = append(fps, own+middle+strings.ToLower(own))
	}
	set := listOf(fps).fpSet
	w := newWindows(&set, nil)
	behind := map[uint64]int{}
	for _, e := range w.filed(0) {
		behind[e.tag]++
	}
	own := make([]int, len(fps))
	for _, e := range w.filed(0) {
		if behind[e.tag] == 1 {
			own[e.fp]++
		}
	}
	for i, n := range own {
		if k := windowClasses[0].k; n < k/2 {
			t.Fatalf("%q is filed under %d windows of its own of %d", fps[i], n, k)
		}
	}
	hay := "noise " + middle + " " + fps[7]
	var got []int
	w.each(hay, &set, func(start, _ int, fp int32) bool {
		got = append(got, start, int(fp))
		return true
	})
	if want := []int{strings.Index(hay, fps[7]), 7}; !slices.Equal(got, want) {
		t.Fatalf("found %v, want %v", got, want)
	}
}

// TestSealKeepsOnlyThePlainTexts: a sealed set finds what it found with
// its texts, holds the texts of only the fingerprints searched for plainly
// (shorter than any window, longer than an entry can say), and tells a
// fingerprint from another text of its length.
func TestSealKeepsOnlyThePlainTexts(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 1<<12) + "!" // past what an entry's length holds
	fps := []string{"six666", "KEY_1=abcdefgh", "func openVault(masterKeyMaterial string) error {", long, "ZX-0001-ALPHA-7731"}
	hay := "x six666 y KEY_1=abcdefgh " + long + " func openVault(masterKeyMaterial string) error { ZX-0001-ALPHA-7730 ZX-0001-ALPHA-7731"
	defer func(n int) { fpRangeMin = n }(fpRangeMin)
	for _, fpRangeMin = range []int{1 << 14, 1} { // one core's range, every core's
		sealPlainTexts(t, fps, hay, long)
	}
}

func sealPlainTexts(t *testing.T, fps []string, hay, long string) {
	d := derivedOfTexts(fps, "x")
	before := d.match(hay, nil)
	if len(before) != 5 {
		t.Fatalf("fixture: %d matches", len(before))
	}
	d.Seal()
	if after := d.match(hay, nil); !slices.EqualFunc(sortedSpans(before), sortedSpans(after), func(a, b span) bool { return a == b }) {
		t.Fatalf("sealed, found %v, want %v", after, before)
	}
	var held []string
	for _, c := range d.text.chunks {
		held = append(held, strings.TrimRight(string(c), "\x00"))
	}
	if !slices.Equal(held, []string{"six666", long}) {
		t.Fatalf("sealed, the arena holds %.30q", held)
	}
	if texts, _ := d.Fingerprints(); texts != nil {
		t.Fatalf("sealed, Fingerprints gives texts: %d", len(texts))
	}
	for _, f := range fps {
		if _, ok := d.Holds(f); !ok {
			t.Fatalf("sealed, %.20q is not held", f)
		}
	}
	if _, ok := d.Holds("ZX-0001-ALPHA-7730"); ok {
		t.Fatal("sealed, a text of a fingerprint's length is held")
	}
}

func sortedSpans(s []span) []span {
	s = slices.Clone(s)
	slices.SortFunc(s, func(a, b span) int { return a.start - b.start })
	return s
}

// overBudget makes every set too big for the window budget till t ends.
func overBudget(t *testing.T) {
	saved := windowBudget
	windowBudget = 1
	t.Cleanup(func() { windowBudget = saved })
}

// listOf is texts as fingerprints, in order, all of one path.
func listOf(texts []string) *fpList {
	var l fpList
	for _, t := range texts {
		l.fps = append(l.fps, fingerprint{text: l.text.add(t), path: l.pathIndex("/p")})
	}
	return &l
}

// filedEntry is an entry with the bits of the hash it was filed under.
type filedEntry struct {
	tag uint64 // its group and its own tag: windows filed alike have the same
	fp  int32
}

// filed is the entries of class c.
func (w *windows) filed(c int) []filedEntry {
	var out []filedEntry
	d := w.dir[c]
	for t := 0; t+1 < len(d); t++ {
		for _, e := range w.entries[d[t]:d[t+1]] {
			out = append(out, filedEntry{tag: uint64(t)<<16 | uint64(e.tag), fp: e.fp})
		}
	}
	return out
}

// derivedOfTexts is the matcher of texts, all of one path.
func derivedOfTexts(texts []string, label string) *Derived {
	l := listOf(texts)
	return newDerived(l.fpSet, l.paths, label, nil)
}

// TestWindowsOnEveryCore: the index made on every core, each on a range of
// the fingerprints, is the one a single core makes, entry for entry, at
// full strides and at the smallest.
func TestWindowsOnEveryCore(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one core: nothing to share out")
	}
	var texts []string
	for i := range 3000 {
		texts = append(texts, fmt.Sprintf("func step%d_%d(x int) int { return x*%d }", i, i%12, i%7),
			fmt.Sprintf("step%d_%d", i, i%12), fmt.Sprintf("k%05d", i), fmt.Sprintf("VALUE_%d_of_the_%dth", i, i%40))
	}
	set := listOf(texts).fpSet
	for _, budget := range []int{windowBudget, 1} {
		saved, savedMin := windowBudget, fpRangeMin
		windowBudget = budget
		fpRangeMin = len(texts)
		one := newWindows(&set, nil)
		fpRangeMin = 1
		if n := len(fpRanges(len(texts))); n < 2 {
			t.Fatalf("%d ranges", n)
		}
		every := newWindows(&set, nil)
		windowBudget, fpRangeMin = saved, savedMin
		if !reflect.DeepEqual(one, every) {
			t.Fatalf("budget %d: the index made on every core differs from one core's", budget)
		}
	}
}

// TestWindowCountsOnEveryCore: the windows' counts made on every core,
// each range into a table of its own, added up, are one core's, counter
// for counter, those that saturate too.
func TestWindowCountsOnEveryCore(t *testing.T) {
	var texts []string
	for i := range 3000 { // the windows of the tail they share: past 255
		texts = append(texts, fmt.Sprintf("step%d_%d: a tail that every one of these lines shares", i, i%12), fmt.Sprintf("k%05d", i))
	}
	set := listOf(texts).fpSet
	classOf := func(n int) (int, int) {
		for c := range windowClasses {
			if n >= windowClasses[c].w {
				return c, 1
			}
		}
		return -1, 0
	}
	counted := func(ranges int) windowCounts {
		defer func(n int) { fpRangeMin = n }(fpRangeMin)
		fpRangeMin = len(texts) / ranges
		if n := len(fpRanges(len(texts))); ranges > 1 && runtime.GOMAXPROCS(0) >= 2 && n < 2 {
			t.Fatalf("fixture: %d range", n)
		}
		wc := newWindowCounts(&set)
		wc.count(&set, classOf, func(i, _ int) bool { return i%3 != 0 })
		wc.count(&set, classOf, func(i, _ int) bool { return i%3 == 0 })
		return wc
	}
	one, every := counted(1), counted(4)
	if !slices.Contains(one.n, math.MaxUint8) {
		t.Fatal("fixture: no count saturated")
	}
	if !slices.Equal(one.n, every.n) {
		t.Fatal("the counts made on every core differ from one core's")
	}
}

// TestWindowsQueueEveryPlace: the places whose windows pass a class's
// filter are looked up a queue at a time (foundQueue); a text with many
// more of them than a queue holds, of every class, has each fingerprint
// found at each of its places, the last queue's too, and fn saying stop
// is the last call.
func TestWindowsQueueEveryPlace(t *testing.T) {
	fps := []string{"line-of-thirty-three-bytes-long!!", "a-line-of-24-bytes-long!", "sixteen-byte-ish", "eight-b!!!", "six666"}
	var hay strings.Builder
	n := 3*len(foundQueue{}.at) + 5
	for i := range n {
		fmt.Fprintf(&hay, "%d %s|", i, strings.Join(fps, " "))
	}
	set := listOf(fps).fpSet
	w := newWindows(&set, nil)
	found := make([]int, len(fps))
	w.each(hay.String(), &set, func(start, _ int, fp int32) bool {
		if !strings.HasPrefix(hay.String()[start:], fps[fp]) {
			t.Fatalf("%q found at %d, where it is not", fps[fp], start)
		}
		found[fp]++
		return true
	})
	for i, f := range fps {
		if found[i] != n {
			t.Errorf("%q found %d times, want %d", f, found[i], n)
		}
	}
	calls := 0
	w.each(hay.String(), &set, func(int, int, int32) bool {
		calls++
		return calls < 40
	})
	if calls != 40 {
		t.Errorf("fn was called %d times after it said stop at the 40th", calls-40)
	}
}

// TestClassTable holds classAt's table to the classes worked out, at every
// shift planWindows uses and lengths well past the table's.
func TestClassTable(t *testing.T) {
	for shift := range uint(4) {
		for n := range 300 {
			c, k := classAt(n, shift)
			if wc, wk := classSearch(n, shift); c != wc || k != wk {
				t.Fatalf("length %d, shift %d: class %d stride %d, want %d %d", n, shift, c, k, wc, wk)
			}
		}
		if c, _ := classAt(math.MaxUint16+1, shift); c != -1 {
			t.Fatalf("a fingerprint too long for an entry is in class %d", c)
		}
	}
}

// TestLongerClassesGated: over the budget, at the smallest strides, the
// classes longer than shareClass's are gated (their windows looked up only
// where shareClass's pass finds their first 8 bytes) and have no pass of
// their own; each of their fingerprints is still found where it is, once,
// also where its 8 bytes come without it; under the budget nothing is
// gated.
func TestLongerClassesGated(t *testing.T) {
	texts := []string{
		"lines of twenty bytes",                              // class 2 (16-byte windows)
		"a line of twenty-eight bytes",                       // class 1 (24)
		"a line that is long enough for the 32-byte windows", // class 0
		"key_9f3a1", // shareClass
	}
	set := listOf(texts).fpSet
	if w := newWindows(&set, nil); w.gated != nil {
		t.Fatalf("under the budget, classes %v gated", w.gated)
	}
	overBudget(t)
	w := newWindows(&set, nil)
	if !slices.Equal(w.gated, []int{0, 1, 2}) {
		t.Fatalf("gated %v, want the three longer classes", w.gated)
	}
	for i, s := range texts[:3] {
		c, _ := classAt(len(s), 3)
		if got := w.filed(c); len(got) != 1 || got[0].fp != int32(i) {
			t.Fatalf("%q: class %d holds %v", s, c, got)
		}
	}
	// Each line's window starts with 8 bytes that are in the text twice:
	// once with the line, once without.
	var hay strings.Builder
	for _, s := range texts {
		o := int(w.from[slices.Index(texts, s)])
		hay.WriteString(s[o:min(o+8, len(s))] + " | " + s + " | ")
	}
	got := map[[2]int]int{}
	w.each(hay.String(), &set, func(start, n int, fp int32) bool {
		got[[2]int{start, int(fp)}]++
		return true
	})
	want := map[[2]int]int{}
	for i, s := range texts {
		want[[2]int{strings.LastIndex(hay.String(), " "+s+" ") + 1, i}] = 1
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("found %v, want %v", got, want)
	}
}

// passing8 looks at four places a step: it must stop where a place at a
// time stops, whatever the text's length, the place it starts from and
// how many places pass.
func TestPassing8(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 8))
	for _, density := range []int{1, 8, 32} { // bits of 64 set in each word
		filter, fshift := randomFilter(r, density)
		for range 2000 {
			b := make([]byte, r.IntN(40))
			for k := range b {
				b[k] = byte(r.IntN(256))
			}
			from := r.IntN(len(b) + 1)
			want, wantH := len(b)-7, uint64(0)
			for i := from; i+8 <= len(b); i++ {
				h := hash8(b, i)
				x, m, g := filter[h>>fshift], filterMask(h), gateMask(h)
				if x&m == m || x&g == g {
					want, wantH = i, h
					break
				}
			}
			got, h := passing8(b, from, filter, fshift)
			if got+8 > len(b) && want+8 > len(b) {
				continue // none: both past the last place
			}
			if got != want || h != wantH {
				t.Fatalf("density %d, %d bytes from %d: place %d (hash %x), want %d (%x)", density, len(b), from, got, h, want, wantH)
			}
		}
	}
}

// passing has a loop of its own for each class: it must stop where
// windowHash, a place at a time, stops, for every class and stride,
// whatever the text's length, the place it starts from and how many places
// pass.
func TestPassing(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	for _, density := range []int{1, 8, 32} { // bits of 64 set in each word
		filter, fshift := randomFilter(r, density)
		for c, class := range windowClasses {
			for _, k := range []int{1, 2, 3, 4, 8} {
				for range 500 {
					b := make([]byte, r.IntN(4*class.w+8*k))
					for i := range b {
						b[i] = byte(r.IntN(256))
					}
					from := r.IntN(len(b) + 1)
					want, wantH := -1, uint64(0)
					for i := from; i+class.w <= len(b); i += k {
						h := windowHash(b, i, c)
						if m := filterMask(h); filter[h>>fshift]&m == m {
							want, wantH = i, h
							break
						}
					}
					got, h := passing(b, from, c, k, filter, fshift)
					if want < 0 {
						if got+class.w <= len(b) || (got-from)%k != 0 {
							t.Fatalf("class %d, stride %d, density %d, %d bytes from %d: place %d, want none", class.w, k, density, len(b), from, got)
						}
						continue
					}
					if got != want || h != wantH {
						t.Fatalf("class %d, stride %d, density %d, %d bytes from %d: place %d (hash %x), want %d (%x)", class.w, k, density, len(b), from, got, h, want, wantH)
					}
				}
			}
		}
	}
}

// randomFilter is a filter of 256 words with about density bits of 64 set
// in each, and the shift that picks its word from a hash.
func randomFilter(r *rand.Rand, density int) ([]uint64, uint) {
	filter := make([]uint64, 1<<8)
	for k := range filter {
		for range density {
			filter[k] |= 1 << r.IntN(64)
		}
	}
	return filter, 64 - 8
}
