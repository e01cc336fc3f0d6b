package redact

import (
	"cmp"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"sync"

	"github.com/scrim-dev/scrim/internal/spool"
)

// Kept matches: where a preview found the fingerprints of its gathering in
// the text it searched, kept beside that gathering, so that the next
// preview of the same session, policy and gathering takes the places from
// there instead of searching every byte of the session again (the window
// search was 3.8 of the 12.6 CPU-s of a warm preview at a million
// messages, and took it from 1.07 to 1.45-1.61 times show's time). What a
// search finds depends only on the unit's text and the fingerprints, so
// the kept places are the search's result: the caller keeps them only
// with the gathering they were found with (tally.SaveMatches names it by
// a hash of the kept gathering), and for the session's same messages.

// keptSpan is one place a fingerprint was found: in the unit of key key
// (session.Unit.Key) of stored part part of message seq, n bytes at start,
// a fingerprint of the file with index path in the record's paths.
type keptSpan struct {
	seq            uint64
	part, key      int32
	start, n, path int32
}

func compareKept(a, b keptSpan) int {
	return cmp.Or(cmp.Compare(a.seq, b.seq), cmp.Compare(a.part, b.part), cmp.Compare(a.key, b.key),
		cmp.Compare(a.start, b.start), cmp.Compare(a.n, b.n), cmp.Compare(a.path, b.path))
}

// matchNotes collects what a batch's search found, from the goroutines
// that filter its chunks.
type matchNotes struct {
	mu    sync.Mutex
	spans []keptSpan
	paths []string // by keptSpan.path: the Derived's paths
}

func (m *matchNotes) add(spans []keptSpan) {
	m.mu.Lock()
	m.spans = append(m.spans, spans...)
	m.mu.Unlock()
}

// matchesVersion is the first byte of a record of kept matches.
const matchesVersion = 1

// matchRecorder encodes the places a stream's batches found, in order of
// their messages, for Stream.Matched. The entries wait in a spool: in
// memory up to a spool's room, then in an unlinked temporary file, so that
// a preview that finds millions of places holds a batch's of them, and
// their record only once the last batch is done.
type matchRecorder struct {
	entries spool.Spool
	size    int64  // bytes of entries
	buf     []byte // a batch's, as they are encoded
	paths   []string
	index   map[string]uint64
	last    uint64 // the Seq of the last entry
	full    bool   // past its room, or not kept: nothing is kept
	room    int64
}

// maxMatches bounds what a stream notes: past it, nothing is kept and the
// next preview searches again.
var maxMatches int64 = 32 << 20

func newMatchRecorder() *matchRecorder {
	return &matchRecorder{index: map[string]uint64{}, room: maxMatches}
}

// add encodes a batch's notes, sorted.
func (r *matchRecorder) add(m *matchNotes) {
	if r.full || len(m.spans) == 0 {
		return
	}
	slices.SortFunc(m.spans, compareKept)
	b := r.buf[:0]
	for _, sp := range m.spans {
		path := m.paths[sp.path]
		i, ok := r.index[path]
		if !ok {
			i = uint64(len(r.paths))
			r.index[path] = i
			r.paths = append(r.paths, path)
		}
		b = binary.AppendUvarint(b, sp.seq-r.last)
		b = binary.AppendUvarint(b, uint64(sp.part))
		b = binary.AppendUvarint(b, uint64(sp.key+1))
		b = binary.AppendUvarint(b, uint64(sp.start))
		b = binary.AppendUvarint(b, uint64(sp.n))
		b = binary.AppendUvarint(b, i)
		r.last = sp.seq
	}
	r.buf, r.size = b, r.size+int64(len(b))
	if _, err := r.entries.Write(b); err != nil || r.size > r.room {
		r.drop()
	}
}

// drop lets go of everything noted: nothing is kept.
func (r *matchRecorder) drop() {
	r.entries.Close()
	*r = matchRecorder{full: true}
}

// record appends the record to b: the version, the paths, then the
// entries. nil if the notes outgrew their room or the record would be
// more than most bytes. The recorder is done with after it.
func (r *matchRecorder) record(b []byte, most int) []byte {
	if r.full {
		return nil
	}
	defer r.drop()
	b = append(b, matchesVersion)
	b = binary.AppendUvarint(b, uint64(len(r.paths)))
	for _, p := range r.paths {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	if int64(len(b))+r.size > int64(most) {
		return nil
	}
	rd, err := r.entries.Reader()
	if err != nil {
		return nil
	}
	head := len(b)
	b = slices.Grow(b, int(r.size))[:head+int(r.size)]
	if _, err := io.ReadFull(rd, b[head:]); err != nil {
		return nil
	}
	return b
}

// keptMatches are the places a record holds, for a batch's filtering: safe
// for concurrent use (read only). The entries stay encoded, found through
// the Seq of each message that has some and where its entries start: at
// a million messages, decoded into records of their own they took a warm
// preview from 19 to 45 MiB.
type keptMatches struct {
	entries []byte
	seqs    []uint64 // each message with places, in order
	at      []int    // where its entries start in entries
	paths   []string
	places  []string
}

var errKeptMatches = errors.New("redact: kept matches do not decode")

// keptEntry decodes the entry at b[i:]: its Seq's distance from the last
// one's, and the rest of its keptSpan; next is where the next one starts,
// 0 if it does not decode.
func keptEntry(b []byte, i int) (delta uint64, sp keptSpan, next int) {
	var f [6]uint64
	for j := range f {
		x, n := binary.Uvarint(b[i:])
		if n <= 0 {
			return 0, sp, 0
		}
		f[j], i = x, i+n
	}
	if f[1] > 1<<31-1 || f[2] > 1<<31 || f[3] > 1<<31-1 || f[4] > 1<<31-1 || f[5] > 1<<31-1 {
		return 0, sp, 0
	}
	return f[0], keptSpan{part: int32(f[1]), key: int32(f[2]) - 1, start: int32(f[3]), n: int32(f[4]), path: int32(f[5])}, i
}

// decodeMatches reads a record Stream.Matched made, with placeholders for
// the tier labelled label.
func decodeMatches(v []byte, label string) (*keptMatches, error) {
	if len(v) == 0 || v[0] != matchesVersion {
		return nil, errKeptMatches
	}
	v = v[1:]
	np, n := binary.Uvarint(v)
	if n <= 0 || np > uint64(len(v)) {
		return nil, errKeptMatches
	}
	v = v[n:]
	k := &keptMatches{paths: make([]string, np), places: make([]string, np)}
	for i := range k.paths {
		size, n := binary.Uvarint(v)
		if n <= 0 || size > uint64(len(v)-n) {
			return nil, errKeptMatches
		}
		k.paths[i], v = string(v[n:n+int(size)]), v[n+int(size):]
		k.places[i] = Placeholder(k.paths[i], label)
	}
	k.entries = v
	seq := uint64(0)
	var last keptSpan
	for i := 0; i < len(v); {
		delta, sp, next := keptEntry(v, i)
		if next == 0 || uint64(sp.path) >= np {
			return nil, errKeptMatches
		}
		sp.seq = seq + delta
		if len(k.seqs) > 0 && compareKept(last, sp) > 0 {
			return nil, errKeptMatches // out of order: not a record Matched made
		}
		if len(k.seqs) == 0 || sp.seq != seq {
			k.seqs, k.at = append(k.seqs, sp.seq), append(k.at, i)
		}
		seq, last, i = sp.seq, sp, next
	}
	return k, nil
}

// of appends to spans the places kept for the unit of key key of stored
// part part of message seq whose text is s; ok false if one does not fit
// s (a record not of this text: the caller searches instead).
func (k *keptMatches) of(seq uint64, part, key int, s string, spans []span) ([]span, bool) {
	had := len(spans)
	m, found := slices.BinarySearch(k.seqs, seq)
	if !found {
		return spans, true
	}
	for i := k.at[m]; i < len(k.entries); {
		delta, sp, next := keptEntry(k.entries, i)
		if next == 0 || delta != 0 && i != k.at[m] {
			break // the next message's
		}
		if int(sp.part) == part && int(sp.key) == key {
			if int(sp.start)+int(sp.n) > len(s) {
				return spans[:had], false
			}
			spans = append(spans, span{start: int(sp.start), end: int(sp.start + sp.n), kind: "derived", path: k.paths[sp.path], placeholder: k.places[sp.path]})
		}
		i = next
	}
	return spans, true
}

// NoteMatches has the stream note where it finds the fingerprints, from
// its first batch on, for Matched: for a gathering the caller keeps
// (tally.SaveGathered), so that the next preview with it searches none of
// the session (ResumeMatches). Only before the first batch, and only for
// a tier with derived = "redact".
func (s *Stream) NoteMatches() {
	if s.gather != nil && !s.started && s.kept == nil {
		s.rec = newMatchRecorder()
	}
}

// Matched appends to b a record of where the batches redacted so far (the
// whole session, once the last is done) had the fingerprints, for
// ResumeMatches; nil if nothing was noted (NoteMatches), or the record
// would be more than most bytes. It lets go of what was noted: once only.
func (s *Stream) Matched(b []byte, most int) []byte {
	if s.rec == nil {
		return nil
	}
	return s.rec.record(b, most)
}

// ResumeMatches has the stream take where the fingerprints are from kept, a
// record Matched made of a stream that used the gathering this one resumed
// (Resume) over the same messages, instead of searching: the caller
// answers for that (tally.LoadMatches). Only after Resume and before the
// first batch; false if kept does not decode.
func (s *Stream) ResumeMatches(kept []byte) bool {
	if !s.resumed || s.started {
		return false
	}
	k, err := decodeMatches(kept, s.tier.Label)
	if err != nil {
		return false
	}
	s.kept, s.rec = k, nil
	return true
}
