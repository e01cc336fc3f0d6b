package redact

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"slices"

	"github.com/scrim-dev/scrim/policy"
)

// gatherRules names the rules a gathering is made with: how fingerprints
// are cut (fingerprint.go) and which content counts as withheld or as
// readable (chunk.go, derived.go). A kept gathering made with other rules is
// not taken: change it with any of them, or with what it keeps.
const gatherRules = 3

// Gathered encodes what the Stream's gathering found, to keep beside the
// session: the fingerprints, each with its path and where its windows
// start (windows.from), and every path decision they rest on (the decision
// of each path the session names). A later Stream of the same content, for
// the same tier, takes it with Resume instead of reading the session twice
// more. The encoding is appended to b; it is nil for a tier that gathers
// nothing, or when the result would be longer than most bytes (the store
// holds no longer record, and making it would only cost memory: on the UI
// benchmark's session, 89 MB, twice over). It must be called once the
// gathering passes are done, and before Next, which lets the texts go
// (Derived.Seal); after, or after Resume, it is nil.
func (s *Stream) Gathered(b []byte, most int) []byte {
	if s.gather == nil {
		return nil
	}
	s.finishGather()
	return encodeGathered(b, most, s.memo, s.derived)
}

// encodeGathered appends to b d and the decisions in m it rests on, if
// that makes at most most bytes; else it returns nil. The room is reserved
// once, measured, not grown as it is written.
func encodeGathered(b []byte, most int, m *Memo, d *Derived) []byte {
	if d.Sealed() || m.compacted() {
		return nil // its texts, or the allowed paths', are gone
	}
	paths := make([]string, 0, len(m.verdicts))
	for p := range m.verdicts {
		paths = append(paths, p)
	}
	slices.Sort(paths) // and found there by halving, not a map of them beside
	size := 1 + uvarintLen(uint64(len(paths)))
	for _, p := range paths {
		size += uvarintLen(uint64(len(p))) + len(p) + 1
	}
	var fps int
	var at []uint64 // each of d's paths' place among paths
	if d != nil {
		fps = len(d.fps)
		at = make([]uint64, len(d.paths))
		for k, p := range d.paths {
			i, ok := slices.BinarySearch(paths, p)
			if !ok {
				// Withheld content comes from decided paths only; a
				// gathering that says otherwise is not kept.
				return nil
			}
			at[k] = uint64(i)
		}
		if len(d.win.from) != fps {
			return nil
		}
		for i, f := range d.fps {
			n := d.lenOf(int32(i))
			size += uvarintLen(uint64(n)) + n + uvarintLen(at[f.path]) + uvarintLen(uint64(d.win.from[i]))
		}
	}
	size += uvarintLen(uint64(fps))
	if len(b)+size > most {
		return nil
	}
	b = slices.Grow(b, size)
	b = append(b, gatherRules)
	b = binary.AppendUvarint(b, uint64(len(paths)))
	for _, p := range paths {
		b = appendString(b, p)
		b = append(b, boolByte(m.verdicts[p].allowed))
	}
	b = binary.AppendUvarint(b, uint64(fps))
	for k := range fps {
		b = appendString(b, d.textOf(int32(k)))
		b = binary.AppendUvarint(b, at[d.fps[k].path])
		b = binary.AppendUvarint(b, uint64(d.win.from[k]))
	}
	return b
}

// uvarintLen is how many bytes binary.AppendUvarint writes for v.
func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// Resume takes kept, a gathering Gathered encoded for this session's
// content and tier (the caller checks those: revision, message count and
// the tier's fingerprint), in place of the gathering passes; the Stream
// holds on to kept, which must not be changed after. Every path it
// names is decided again, now: the files behind them may have changed
// (a symlink moved, a team file edited), and a gathering made on other
// decisions would miss what is now withheld. Only if each decision is the
// same is it taken; otherwise Resume reports false, and the Stream gathers
// as usual (the decisions just made are kept: they are current).
func (s *Stream) Resume(kept []byte) bool {
	if s.gather == nil || s.started || s.resumed {
		return false
	}
	d, ok := resume(kept, s.p, s.tier, s.memo)
	if !ok {
		return false
	}
	s.derived, s.resumed = d, true
	return true
}

// ResumeDerived is Resume for a caller without a Stream (the TUI): the
// fingerprints kept for model's tier, if every decision they rest on,
// made again now, is the same; nil and true when there are none. The
// fingerprints hold on to kept, which must not be changed after.
func ResumeDerived(kept []byte, model string, p *policy.Policy) (*Derived, bool) {
	tier, _ := p.TierFor(model)
	if !tier.RedactsDerived() {
		return nil, false
	}
	return resume(kept, p, tier, &Memo{})
}

// resume decodes kept and decides each of its paths with m (whose
// decisions stay made); it fails if one differs from the kept one. What it
// returns holds on to kept, which must not be changed.
func resume(kept []byte, p *policy.Policy, tier *policy.Tier, m *Memo) (*Derived, bool) {
	paths, allowed, l, from, err := decodeGathered(kept)
	if err != nil {
		return nil, false
	}
	d := newDecisionsWith(p, tier, m)
	d.batch.Expect(paths)
	same := true
	for i, path := range paths {
		v, ok := m.lookup(path)
		if !ok {
			v = d.decide(path)
			m.verdicts[path] = v
		}
		same = same && v.allowed == allowed[i]
	}
	if !same {
		return nil, false
	}
	if len(l.fps) == 0 {
		return nil, true
	}
	// Nothing encodes a resumed gathering again: kept goes once the
	// index is made (on the 20k benchmark session, 2 of the 6.6 MB its
	// preview held beside show's).
	derived := newDerived(l.fpSet, l.paths, tier.Label, from)
	derived.Seal()
	return derived, true
}

// Remember makes b decide each path once for the pieces added from now on,
// and keep the decisions for Gathered: for a gathering of a whole session
// from its start, to be kept. Forget goes back to deciding afresh for each
// piece, as a builder that lives on while files change must.
func (b *DerivedBuilder) Remember() { b.memo = &Memo{} }

// Forget: see Remember.
func (b *DerivedBuilder) Forget() { b.memo = nil }

// Gathered appends to to d, what b's pieces since Remember gave (Done), and
// the decisions it rests on, as Stream.Gathered does; nil without
// Remember, or past most bytes.
func (b *DerivedBuilder) Gathered(d *Derived, to []byte, most int) []byte {
	if !b.on || b.memo == nil {
		return nil
	}
	return encodeGathered(to, most, b.memo, d)
}

// Finish ends the gathering, once its passes are done: it makes the
// fingerprints of what was gathered (unless Resume took them). Its error
// is that of reading back the texts Spill put in a file; Gathered, Ready,
// Next and Start call it too, and panic on it: nothing is redacted with
// part of the fingerprints. A caller that spills calls it first.
func (s *Stream) Finish() error {
	if s.gather == nil || s.resumed || s.finished {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	if s.gather.cands.spill != nil {
		if s.err = s.gather.cands.unspill(); s.err != nil {
			return s.err
		}
	}
	// A Stream gathers no more once it redacts: the candidates, those
	// that readable content has too among them, are no longer wanted (at
	// 1M messages, 7-8 MB beside what was kept).
	s.derived = s.gather.DoneDropping()
	s.finished = true
	return nil
}

// finishGather is Finish for those that cannot return its error.
func (s *Stream) finishGather() {
	if err := s.Finish(); err != nil {
		panic("redact: " + err.Error())
	}
}

var errGathered = errors.New("kept gathering cannot be read")

func decodeGathered(b []byte) (paths []string, allowed []bool, l fpList, from []uint16, err error) {
	if len(b) == 0 || b[0] != gatherRules {
		return nil, nil, l, nil, errGathered
	}
	r := keptReader{b: b[1:]}
	n := r.count()
	for range n {
		paths = append(paths, r.string())
		allowed = append(allowed, r.byte() == 1)
	}
	// The fingerprints' texts stay where they are, in b: it becomes
	// their arena (at 1M messages that withhold half their reads, 75 MB
	// not copied when the TUI starts again), cut into chunks between
	// texts as an arena's are: none starts arenaChunk or more into its
	// chunk, and a longer one has a chunk of its own.
	start, end := -1, 0 // the chunk being cut, b[start:end]; none yet
	cut := func() {
		if start >= 0 {
			l.text.chunks = append(l.text.chunks, b[start:end:end])
			l.text.used, start = end-start, -1
		}
	}
	m := r.count()
	for range m {
		text := r.bytes()
		off := len(b) - len(r.b) - len(text)
		i, o := r.uvarint(), r.uvarint()
		if r.err == nil && (i >= uint64(len(paths)) || len(text) == 0 || o > math.MaxUint16) {
			r.err = errGathered
		}
		if r.err != nil {
			break
		}
		if start >= 0 && (len(text) > arenaChunk || off+len(text)-start > arenaChunk) {
			cut()
		}
		if start < 0 {
			start = off
		}
		end = off + len(text)
		at := makeRef(len(l.text.chunks), off-start, len(text))
		if len(text) > arenaChunk {
			cut()
		}
		l.fps = append(l.fps, fingerprint{text: at, path: l.pathIndex(paths[i])})
		from = append(from, uint16(o))
	}
	cut()
	if r.err != nil || len(r.b) != 0 {
		return nil, nil, fpList{}, nil, errGathered
	}
	return paths, allowed, l, from, nil
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// keptReader reads a kept gathering; the first failure sticks.
type keptReader struct {
	b   []byte
	err error
}

func (r *keptReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errGathered
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of items, each at least a byte long.
func (r *keptReader) count() uint64 {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err = errGathered
		return 0
	}
	return n
}

func (r *keptReader) string() string { return string(r.bytes()) }

// bytes reads a string's bytes, sharing the kept gathering's.
func (r *keptReader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = errGathered
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

func (r *keptReader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.err = errGathered
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}
