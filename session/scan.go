package session

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"

	"github.com/dgraph-io/badger/v4"

	"github.com/scrim-dev/scrim/internal/cores"
)

// Messages loads all of a session's messages in order, plus the records that
// could not be decoded (skipped, never fatal).
func (s *Store) Messages(id string) ([]Message, []DecodeError, error) {
	return s.Range(id, 1, ^uint64(0))
}

// parallelMin is the smallest range decoded on several cores.
const parallelMin = 2048

// Range loads messages with from <= Seq <= to (clamped to the session).
// Long ranges are decoded on all cores while Badger is read.
func (s *Store) Range(id string, from, to uint64) ([]Message, []DecodeError, error) {
	var out []Message
	var par *parallelDecoder
	var bad []DecodeError
	missing, err := s.records(id, from, to, func(first, n uint64) {
		from = first
		out = make([]Message, n)
		if n >= parallelMin {
			par = newParallelDecoder(id, out, first)
		}
	}, func(seq uint64, v []byte) error {
		if par != nil {
			par.add(seq, v)
		} else if err := decodeMessage(id, seq, v, &out[seq-from]); err != nil {
			bad = append(bad, DecodeError{SessionID: id, Seq: seq, Err: err})
		}
		return nil
	})
	if par != nil {
		bad = par.wait()
	}
	if err != nil {
		return nil, nil, err
	}
	bad = append(bad, missing...)
	if len(bad) > 0 {
		// Slots of records that failed or are missing stay zero.
		out = slices.DeleteFunc(out, func(m Message) bool { return m.Seq == 0 })
		slices.SortFunc(bad, func(a, b DecodeError) int { return cmpUint(a.Seq, b.Seq) })
	}
	return out, bad, nil
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Scan streams messages with from <= Seq <= to (clamped to the session) to fn
// without holding them all; fn must not keep m. Records that cannot be decoded
// are skipped and returned. An error from fn stops the scan and is returned.
func (s *Store) Scan(id string, from, to uint64, fn func(m *Message) error) ([]DecodeError, error) {
	return s.scan(id, from, to, false, fn)
}

// ScanShared is Scan for a reader that lets the messages go together once
// it is done with them (a count's step): their texts, short strings and
// parts are cut from chunks the scan shares among them (sharedRoom), where
// each was an allocation of its own, five for a tool result (with the
// gatherings' pieces, 5.0M of the TUI's first count's 11.5M allocations at
// a million messages). A text or parts kept longer keep their chunk.
func (s *Store) ScanShared(id string, from, to uint64, fn func(m *Message) error) ([]DecodeError, error) {
	return s.scanRuns(id, [][2]uint64{{from, to}}, false, new(uint64), new(sharedRoom), fn)
}

// scan is Scan; sourced, of only the messages that carry a source path
// (ScanSourced).
func (s *Store) scan(id string, from, to uint64, sourced bool, fn func(m *Message) error) ([]DecodeError, error) {
	return s.scanCounting(id, from, to, sourced, new(uint64), fn)
}

// scanCounting is scan that adds to *n the bytes of every record it reads.
func (s *Store) scanCounting(id string, from, to uint64, sourced bool, n *uint64, fn func(m *Message) error) ([]DecodeError, error) {
	return s.scanRuns(id, [][2]uint64{{from, to}}, sourced, n, nil, fn)
}

// scanRuns is scanCounting of several runs of Seqs, each from..to, in
// order, in one snapshot (recordRuns).
func (s *Store) scanRuns(id string, runs [][2]uint64, sourced bool, n *uint64, room *sharedRoom, fn func(m *Message) error) ([]DecodeError, error) {
	var bad []DecodeError
	var skip func(byte) bool
	var fold []byte
	if sourced {
		skip = noSource
	}
	// One message decoded into at a time (fn must not keep it): a Message
	// of each record's own, handed on by pointer, was moved to the heap,
	// 400 MB of a first count's allocations at a million messages.
	var m Message
	missing, err := s.recordRuns(id, runs, nil, skip, func(seq uint64, v []byte) error {
		*n += uint64(len(v))
		if sourced && !maySource(v, &fold) {
			return nil
		}
		m = Message{}
		if err := decodeMessageIn(room, id, seq, v, &m); err != nil {
			bad = append(bad, DecodeError{SessionID: id, Seq: seq, Err: err})
			return nil
		}
		if sourced && !m.sourced() {
			return nil
		}
		return fn(&m)
	})
	bad = append(bad, missing...)
	slices.SortStableFunc(bad, func(a, b DecodeError) int { return cmpUint(a.Seq, b.Seq) })
	return bad, err
}

// ScanAt calls fn with the messages of session id with the given Seqs (in
// order, each once), as many at a time as one read of a run of them gives,
// and at most piece; fn may keep them. Records that cannot be decoded, or
// that are missing, are left out and returned; an error from fn stops the
// reading and is returned.
func (s *Store) ScanAt(id string, seqs []uint64, piece int, fn func(msgs []Message) error) ([]DecodeError, error) {
	var runs [][2]uint64 // runs of consecutive Seqs: each one walk of the iterator
	for i := 0; i < len(seqs); {
		n := 1
		for i+n < len(seqs) && seqs[i+n] == seqs[i+n-1]+1 {
			n++
		}
		runs = append(runs, [2]uint64{seqs[i], seqs[i+n-1]})
		i += n
	}
	var msgs []Message
	flush := func() error {
		if len(msgs) == 0 {
			return nil
		}
		err := fn(msgs)
		msgs = nil
		return err
	}
	bad, err := s.scanRuns(id, runs, false, new(uint64), nil, func(m *Message) error {
		msgs = append(msgs, *m)
		if len(msgs) >= piece {
			return flush()
		}
		return nil
	})
	if err != nil {
		return bad, err
	}
	return bad, flush()
}

// ScanSourced is Scan of only the messages that carry a source path,
// Meta.SourcePaths or a part's SourcePath: those redaction decides on by
// their files, and the only ones a tier's withheld content and the content
// it may read are gathered from (package redact). A record the store
// marked as carrying none (metaNoSource) is not read, and one that cannot
// name a source path (maySource) is not decoded: on the million-message
// benchmark session, where one message in eight is a file read, that is
// most of the work of a pass that gathers. Messages that turn out to carry
// none are left out as well.
func (s *Store) ScanSourced(id string, from, to uint64, fn func(m *Message) error) ([]DecodeError, error) {
	return s.scan(id, from, to, true, fn)
}

// SourcedPieces hands fn, in order, the messages from..to of session id
// that carry a source path (ScanSourced), in pieces that each span at most
// piece messages and read about pieceBytes of records; last says a piece
// is the last. The pieces are read on every core, each by a reader of its
// own, at most one piece a reader ahead of fn: one reader decoding on
// every core still walked the store's keys alone (at a million messages,
// 0.65 s a pass on one core while the other waited). One piece more in
// flight took no time off and was a fourth of the 20,000-message
// benchmark session's first preview's pieces held at once: its peak
// 15.2-15.9 MiB without it against 15.8-17.3 (eight runs each,
// interleaved), the 1M first count and first preview the same within
// the noise. An error from fn stops the reading and is returned; fn may
// keep the messages, but a piece's messages share their memory (as
// ScanShared's do): a text kept past its piece keeps its chunk.
//
// What a piece spans is learnt as the reading goes: the records read so
// far tell how many bytes a message of the session takes, and the next
// piece spans as many messages as pieceBytes holds (the first ones, a few
// dozen). Pieces of a count alone held the messages of a session of long
// tool results many times over: on the 20,000-message benchmark session
// (9 KB a message), four pieces of 1,024 messages in flight were 32 MB of
// decoded text, three times all that `scrim show` holds.
func (s *Store) SourcedPieces(id string, from, to, piece uint64, fn func(msgs []Message, last bool) error) error {
	return s.SourcedPiecesPrepared(id, from, to, piece, nil, func(msgs []Message, _ any, last bool) error { return fn(msgs, last) })
}

// SourcedPiecesPrepared is SourcedPieces with the work on a piece that does
// not have to wait for the pieces before it, prepare (nil: none), done by
// the reader that read it, on every core; fn takes each piece with what
// prepare made of it, in order.
func (s *Store) SourcedPiecesPrepared(id string, from, to, piece uint64, prepare func(msgs []Message) any, fn func(msgs []Message, prepared any, last bool) error) error {
	if from > to || piece == 0 {
		return nil
	}
	type read struct {
		msgs     []Message
		prepared any
		last     bool
		err      error
	}
	readers := cores.N()
	// ahead holds a place for each piece taken and not yet handed to fn:
	// a reader takes one before it takes the next piece, so those read
	// ahead are always the first ones fn waits for, and order, where
	// each piece's result comes in the order the pieces were taken, is
	// never full.
	ahead := make(chan struct{}, readers)
	order := make(chan chan read, readers+1)
	stop := make(chan struct{})
	defer close(stop)
	var (
		mu            sync.Mutex
		next          = from // the first message of the next piece
		closed        bool
		spanned, seen uint64 // messages spanned by the pieces read, and their records' bytes
		kept          uint64 // of those messages, the ones handed on (they carry a source path)
	)
	// take is the next piece, where its result goes, and about how many
	// of its messages carry a source path, as the pieces read tell (0: no
	// telling yet); ok false: none is left. Grown by append from none, a
	// piece's messages had been a twelfth of what the TUI's first count
	// allocated at a million messages.
	take := func() (lo, hi uint64, c chan read, expect int, ok bool) {
		mu.Lock()
		defer mu.Unlock()
		if closed {
			return 0, 0, nil, 0, false
		}
		if next > to || next < from { // next < from: it wrapped past ^uint64(0)
			closed = true
			close(order)
			return 0, 0, nil, 0, false
		}
		span := min(piece, firstPieceSpan) // till a piece is read
		if spanned > 0 && seen > 0 {
			span = min(piece, max(minPieceSpan, pieceBytes*spanned/seen))
		}
		lo, hi = next, min(next+span-1, to)
		if hi < lo { // lo+span-1 overflowed
			hi = to
		}
		next = hi + 1
		if over, e := bits.Mul64(hi-lo+1, kept); spanned > 0 && over == 0 {
			e /= spanned
			expect = int(min(hi-lo+1, e+e/8+1, 1<<20))
		}
		c = make(chan read, 1)
		order <- c
		return lo, hi, c, expect, true
	}
	for r := range readers {
		go func() {
			for {
				// While the user is at the keys, the last reader
				// waits (cores.Wait): a gathering keeps every core
				// busy otherwise, and scrolling while the TUI gathered
				// had steps of 50-60 ms.
				cores.Wait(r)
				select {
				case ahead <- struct{}{}:
				case <-stop:
					return
				}
				lo, hi, c, expect, ok := take()
				if !ok {
					<-ahead
					return
				}
				var r read
				if expect > 0 {
					r.msgs = make([]Message, 0, expect)
				}
				var n uint64
				// The piece's messages go together once fn is done with
				// them: they share their memory (sharedRoom).
				_, r.err = s.scanRuns(id, [][2]uint64{{lo, hi}}, true, &n, new(sharedRoom), func(m *Message) error {
					r.msgs = append(r.msgs, *m)
					return nil
				})
				r.last = hi == to
				mu.Lock()
				spanned, seen, kept = spanned+hi-lo+1, seen+n, kept+uint64(len(r.msgs))
				mu.Unlock()
				if r.err == nil && prepare != nil {
					r.prepared = prepare(r.msgs)
				}
				c <- r
			}
		}()
	}
	for c := range order {
		r := <-c
		<-ahead
		if r.err == nil {
			r.err = fn(r.msgs, r.prepared, r.last)
		}
		if r.err != nil || r.last {
			return r.err
		}
	}
	return nil
}

// pieceBytes is about how many bytes of records a piece of SourcedPieces
// reads; minPieceSpan is the fewest messages it spans, firstPieceSpan
// how many the pieces taken before any is read span. Pieces of 1 MiB, up
// to three in flight and each decoded, were the peak of the 20k benchmark
// session's first preview once gitleaks' rules were compiled as needed
// (BenchmarkRedactProcess20k: 17.6-18.8 MiB with 256 KiB and the heap
// returned before the store closes, 21.5-23.1 without); the 1M import's
// first preview and the TUI's first count took no longer. Once a reader
// held one piece at most, 128 KiB took another 0.5 MiB off (14.8-15.8 MiB
// against 15.6-16.2, six runs each on a fresh import of that session),
// the 1M first count and first preview again the same within the noise.
var pieceBytes uint64 = 128 << 10 // a variable for tests

const (
	minPieceSpan   = 16
	firstPieceSpan = 64
)

// metaNoSource, in a message record's user meta, says the message carries
// no source path: a sourced read skips the record without reading it. The
// store sets it wherever it writes a message; a record without it (written
// before, or by a way that does not know) is read and looked at.
const metaNoSource byte = 1

// recordMeta is the user meta of m's record.
func recordMeta(m *Message) byte {
	if m.sourced() {
		return 0
	}
	return metaNoSource
}

// messageEntry is the entry of m's record v in session id.
func messageEntry(id string, m *Message, v []byte) *badger.Entry {
	return badger.NewEntry(msgKey(id, m.Seq), v).WithMeta(recordMeta(m))
}

func noSource(meta byte) bool { return meta&metaNoSource != 0 }

// sourced reports whether m carries a source path.
func (m *Message) sourced() bool { return len(m.Meta.SourcePaths) > 0 || m.Attributed() }

// maySource reports whether the stored record v may decode to a message
// that carries a source path; false is certain. The store writes the keys
// "sourcePath" and "sourcePaths" as they are, and a record in any other
// shape goes to encoding/json, which matches keys without regard to case
// (the only letter of them with a fold outside ASCII is s, ſ) and reads
// escaped letters: so a record that names neither "ourcepath" in any case
// of its ASCII letters nor escapes an ASCII letter (the store escapes only
// control characters, <, >, & and U+2028-9) cannot carry one. fold is
// room to lower-case v in, kept between calls.
func maySource(v []byte, fold *[]byte) bool {
	if bytes.Contains(v, []byte("ourcePath")) {
		return true
	}
	// Setting bit 5 of every byte turns an ASCII letter into its lower
	// case and no other byte into a letter, eight bytes at a time; the
	// escape's backslash becomes a |, rarer in code than backslashes
	// (searched for in v, the escapes of tabs and newlines made the search
	// for \u00 four times as slow).
	b := slices.Grow((*fold)[:0], len(v))[:len(v)]
	le := binary.LittleEndian
	i := 0
	for ; i+8 <= len(v); i += 8 {
		le.PutUint64(b[i:], le.Uint64(v[i:])|0x2020202020202020)
	}
	for ; i < len(v); i++ {
		b[i] = v[i] | 0x20
	}
	*fold = b
	if bytes.Contains(b, []byte("ourcepath")) {
		return true
	}
	for rest := b; ; {
		i := bytes.Index(rest, []byte("|u00"))
		if i < 0 {
			return false
		}
		if i+4 < len(rest) && '4' <= rest[i+4] && rest[i+4] <= '7' {
			return true // \u0040-\u007f: letters among them
		}
		rest = rest[i+4:]
	}
}

// records reads one snapshot and hands each raw record to fn (v is valid
// only during the call). The header's count bounds what is visible, so
// records written past it by an unfinished bulk append stay hidden. sized,
// when set, learns the clamped first Seq and the number of records expected.
// Gaps in the numbering are returned as ErrMissing.
func (s *Store) records(id string, from, to uint64, sized func(first, n uint64), fn func(seq uint64, v []byte) error) ([]DecodeError, error) {
	return s.recordRuns(id, [][2]uint64{{from, to}}, sized, nil, fn)
}

// recordRuns is records of several runs of Seqs, each from..to, in order,
// less the records whose user meta skip rules out (their values are not
// even read), in one snapshot and with one iterator: an iterator made for
// each run (a merge of all the session's tables) was about 40 µs, and a
// gathering's Settle reads a thousand runs of one message at a million
// messages. sized learns about the first run only.
func (s *Store) recordRuns(id string, runs [][2]uint64, sized func(first, n uint64), skip func(meta byte) bool, fn func(seq uint64, v []byte) error) ([]DecodeError, error) {
	var missed []DecodeError
	err := s.db.View(func(txn *badger.Txn) error {
		h, err := getHeader(txn, id)
		if err != nil {
			return err
		}
		prefix := msgPrefix(id)
		opts := badger.DefaultIteratorOptions
		opts.Prefix = prefix
		// Prefetching starts a goroutine per item to copy its value; the
		// callback reads values in place instead.
		opts.PrefetchValues = false
		var it *badger.Iterator
		defer func() {
			if it != nil {
				it.Close()
			}
		}()
		for r, run := range runs {
			from, to := max(run[0], 1), min(run[1], h.Count)
			if from > to {
				continue
			}
			if sized != nil && r == 0 {
				sized(from, to-from+1)
			}
			if it == nil {
				it = txn.NewIterator(opts)
			}
			end := msgKey(id, to)
			next := from // the Seq expected next; a jump means records are missing
			for it.Seek(msgKey(id, from)); it.Valid(); it.Next() {
				item := it.Item()
				key := item.Key()
				if bytes.Compare(key, end) > 0 {
					break
				}
				seq := binary.BigEndian.Uint64(key[len(prefix):])
				if seq > next {
					missed = append(missed, missing(id, next, seq-1))
				}
				next = seq + 1
				if skip != nil && skip(item.UserMeta()) {
					continue
				}
				if err := s.value(item, func(v []byte) error { return fn(seq, v) }); err != nil {
					return err
				}
			}
			if next <= to {
				missed = append(missed, missing(id, next, to))
			}
		}
		return nil
	})
	return missed, err
}

func decodeMessage(id string, seq uint64, v []byte, m *Message) error {
	return decodeMessageIn(nil, id, seq, v, m)
}

// decodeMessageIn is decodeMessage into room, if not nil (sharedRoom).
func decodeMessageIn(room *sharedRoom, id string, seq uint64, v []byte, m *Message) error {
	if err := unmarshalMessageIn(room, id, v, m); err != nil {
		*m = Message{}
		return err
	}
	if m.Seq != seq || m.SessionID != id {
		err := fmt.Errorf("record is for session %q message %d", m.SessionID, m.Seq)
		*m = Message{}
		return err
	}
	return nil
}

func missing(id string, from, to uint64) DecodeError {
	err := ErrMissing
	if to > from {
		err = fmt.Errorf("%w (so are messages %d–%d)", ErrMissing, from+1, to)
	}
	return DecodeError{SessionID: id, Seq: from, Err: err}
}

// parallelDecoder decodes records into out[seq-first] on every core while
// the caller keeps reading. Records are copied into reused batches because
// Badger's value memory is valid only during its callback.
type parallelDecoder struct {
	id    string
	out   []Message
	first uint64
	cur   *recordBatch
	work  chan *recordBatch
	free  chan *recordBatch
	wg    sync.WaitGroup
	mu    sync.Mutex
	bad   []DecodeError
}

type recordBatch struct {
	seqs []uint64
	ends []int // record i is buf[ends[i-1]:ends[i]]
	buf  []byte
}

const batchRecords = 256

func newParallelDecoder(id string, out []Message, first uint64) *parallelDecoder {
	n := min(cores.N(), 8)
	p := &parallelDecoder{id: id, out: out, first: first,
		work: make(chan *recordBatch, 2*n), free: make(chan *recordBatch, 3*n)}
	for range n {
		p.wg.Add(1)
		go p.decode()
	}
	return p
}

func (p *parallelDecoder) add(seq uint64, v []byte) {
	if p.cur == nil {
		select {
		case p.cur = <-p.free:
			p.cur.seqs, p.cur.ends, p.cur.buf = p.cur.seqs[:0], p.cur.ends[:0], p.cur.buf[:0]
		default:
			p.cur = &recordBatch{seqs: make([]uint64, 0, batchRecords), ends: make([]int, 0, batchRecords)}
		}
	}
	b := p.cur
	b.seqs = append(b.seqs, seq)
	b.buf = append(b.buf, v...)
	b.ends = append(b.ends, len(b.buf))
	if len(b.seqs) == batchRecords {
		p.work <- b
		p.cur = nil
	}
}

func (p *parallelDecoder) decode() {
	defer p.wg.Done()
	for b := range p.work {
		start := 0
		for i, seq := range b.seqs {
			v := b.buf[start:b.ends[i]]
			start = b.ends[i]
			if err := decodeMessage(p.id, seq, v, &p.out[seq-p.first]); err != nil {
				p.mu.Lock()
				p.bad = append(p.bad, DecodeError{SessionID: p.id, Seq: seq, Err: err})
				p.mu.Unlock()
			}
		}
		select {
		case p.free <- b:
		default:
		}
	}
}

// wait decodes what is left and returns the records that failed.
func (p *parallelDecoder) wait() []DecodeError {
	if p.cur != nil && len(p.cur.seqs) > 0 {
		p.work <- p.cur
	}
	close(p.work)
	p.wg.Wait()
	return p.bad
}

// ScanStored hands fn the stored JSON of each of session id's messages, in
// order, valid only during the call: for search, which looks at the bytes
// before it decodes anything (DecodeStored). Gaps are returned as
// ErrMissing.
func (s *Store) ScanStored(id string, fn func(seq uint64, v []byte) error) ([]DecodeError, error) {
	return s.records(id, 1, math.MaxUint64, nil, fn)
}

// DecodeStored decodes one record ScanStored handed, checking that it is
// message seq of session id.
func DecodeStored(id string, seq uint64, v []byte, m *Message) error {
	return decodeMessage(id, seq, v, m)
}
