package secrets

import (
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"sync"

	"github.com/cespare/xxhash/v2"

	"github.com/scrim-dev/scrim/internal/cores"
	"github.com/scrim-dev/scrim/session"
)

// Found is the credentials found in a session's messages, by Seq. A message
// with none has no entry.
type Found map[uint64][]Finding

// Of returns the findings of m.
func (f Found) Of(m *session.Message) []Finding { return f[m.Seq] }

// Stats says how Lookup got its findings.
type Stats struct {
	Stored  int // messages whose stored record was current
	Scanned int // messages scanned now
}

// Lookup returns the findings of msgs, messages of session id in st: from
// their stored records where those are current (same rule set, same
// content), otherwise by scanning them, on every core, and storing what it
// found. Events are never sent, so never scanned. A record that cannot be
// stored costs a scan next time, nothing else: the findings are returned
// all the same.
func Lookup(st *session.Store, id string, msgs []session.Message) (Found, Stats, error) {
	var stats Stats
	found := Found{}
	if len(msgs) == 0 {
		return found, stats, nil
	}
	l, err := LookupLazy(st, id, msgs)
	if err != nil {
		return nil, stats, err
	}
	results := make([][]Finding, len(msgs))
	parallel(len(msgs), func(i int) { results[i] = l.Of(&msgs[i]) })
	for i, fs := range results {
		if msgs[i].Role != session.RoleEvent {
			stats.Stored++
		}
		if len(fs) > 0 {
			found[msgs[i].Seq] = fs
		}
	}
	stats.Scanned = l.Save() // best effort: see above
	stats.Stored -= stats.Scanned
	return found, stats, nil
}

// storedRecords reads the records kept of msgs, messages of session id,
// by Seq.
func storedRecords(st *session.Store, id string, msgs []session.Message) (map[uint64][]byte, error) {
	stored := make(map[uint64][]byte, len(msgs))
	if len(msgs) == 0 {
		return stored, nil
	}
	lo, hi := msgs[0].Seq, msgs[0].Seq
	for i := range msgs {
		lo, hi = min(lo, msgs[i].Seq), max(hi, msgs[i].Seq)
	}
	// The records side by side in shared chunks: nearly all are 13 bytes
	// (no finding), and a copy of each of their own was a million
	// allocations of the TUI's first count at a million messages.
	var room []byte
	err := st.ScanRecords(id, lo, hi, func(seq uint64, v []byte) error {
		if cap(room)-len(room) < len(v) {
			room = make([]byte, 0, max(recordRoom, len(v)))
		}
		n := len(room)
		room = append(room, v...)
		stored[seq] = room[n:len(room):len(room)]
		return nil
	})
	return stored, err
}

// recordRoom is the size of the chunks storedRecords copies records into.
const recordRoom = 16 << 10

// Lazy is what Lookup is made of, for a caller that asks for the findings
// of only the messages whose content it sends (redact.Context.Findings asks for none
// of a message the tier withholds whole): the records kept of msgs are
// read at once, but a message without a current one is scanned only when
// Of asks for it, and Save keeps what was scanned. A tier's count then
// never scans what it withholds (on the UI benchmark's million-message
// session, a tenth of the messages and three tenths of the text); a tier
// that sends it scans it when it asks. Of is safe for concurrent use.
type Lazy struct {
	st     *session.Store
	id     string
	stored map[uint64][]byte

	mu      sync.Mutex
	scanned map[uint64][]byte
}

// LookupLazy reads what is kept of msgs, messages of session id in st.
func LookupLazy(st *session.Store, id string, msgs []session.Message) (*Lazy, error) {
	stored, err := storedRecords(st, id, msgs)
	if err != nil {
		return nil, err
	}
	return &Lazy{st: st, id: id, stored: stored, scanned: map[uint64][]byte{}}, nil
}

// Of returns the findings of m, one of the messages LookupLazy was given:
// from its kept record if that is current, else by scanning it now.
func (l *Lazy) Of(m *session.Message) []Finding {
	if m.Role == session.RoleEvent {
		return nil
	}
	h := contentHash(m)
	if fs, ok := decodeRecord(l.stored[m.Seq], h); ok {
		return fs
	}
	fs := Scan(m)
	rec := encodeRecord(h, fs)
	l.mu.Lock()
	l.scanned[m.Seq] = rec
	l.mu.Unlock()
	return fs
}

// Record is the record kept of m's findings (session.Store.ScanOnImport,
// which has an import keep it): m scanned now. Events are never sent, so
// never scanned: nil.
func Record(m *session.Message) []byte {
	if m.Role == session.RoleEvent {
		return nil
	}
	return encodeRecord(contentHash(m), Scan(m))
}

// Save keeps the findings of the messages Of scanned (best effort, as
// Lookup keeps them) and returns how many there were.
func (l *Lazy) Save() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.scanned)
	if n > 0 {
		l.st.PutScanRecords(l.id, l.scanned)
		l.scanned = map[uint64][]byte{}
	}
	return n
}

// ScanAll scans msgs (events left out) on every core, for a caller without a
// store. Findings are keyed by Seq, which must then be unique.
func ScanAll(msgs []session.Message) Found {
	results := make([][]Finding, len(msgs))
	parallel(len(msgs), func(i int) {
		if msgs[i].Role != session.RoleEvent {
			results[i] = Scan(&msgs[i])
		}
	})
	found := Found{}
	for i, fs := range results {
		if len(fs) > 0 {
			found[msgs[i].Seq] = fs
		}
	}
	return found
}

// parallel runs fn(0..n-1) on every core, a few at a time.
func parallel(n int, fn func(int)) {
	const batch = 16
	var next sync.Mutex
	at := 0
	var wg sync.WaitGroup
	for range min(cores.N(), (n+batch-1)/batch) {
		wg.Go(func() {
			for {
				next.Lock()
				lo := at
				at += batch
				next.Unlock()
				if lo >= n {
					return
				}
				for i := lo; i < min(lo+batch, n); i++ {
					fn(i)
				}
			}
		})
	}
	wg.Wait()
}

// A record is a version byte, the rule set's CRC-32, the message's content
// hash, then the findings as JSON (nothing when there are none).
const recordVersion = 1

var ruleSetSum = crc32.ChecksumIEEE([]byte(RuleSet))

func encodeRecord(hash uint64, fs []Finding) []byte {
	b := make([]byte, 0, 13+48*len(fs))
	b = append(b, recordVersion)
	b = binary.BigEndian.AppendUint32(b, ruleSetSum)
	b = binary.BigEndian.AppendUint64(b, hash)
	if len(fs) > 0 {
		js, _ := json.Marshal(fs) // plain structs: cannot fail
		b = append(b, js...)
	}
	return b
}

// decodeRecord returns a record's findings if it was made with this rule
// set from content with this hash.
func decodeRecord(v []byte, hash uint64) ([]Finding, bool) {
	if len(v) < 13 || v[0] != recordVersion || binary.BigEndian.Uint32(v[1:]) != ruleSetSum ||
		binary.BigEndian.Uint64(v[5:]) != hash {
		return nil, false
	}
	if len(v) == 13 {
		return nil, true
	}
	var fs []Finding
	if json.Unmarshal(v[13:], &fs) != nil {
		return nil, false
	}
	return fs, true
}

// contentHash is a hash of everything Scan reads of m: its parts' kinds,
// texts and inputs.
func contentHash(m *session.Message) uint64 {
	d := xxhash.New()
	var n [8]byte
	for i := range m.Parts {
		p := &m.Parts[i]
		d.WriteString(string(p.Kind))
		binary.BigEndian.PutUint64(n[:], uint64(len(p.Text)))
		d.Write(n[:])
		d.WriteString(p.Text)
		binary.BigEndian.PutUint64(n[:], uint64(len(p.Input)))
		d.Write(n[:])
		d.Write(p.Input)
	}
	return d.Sum64()
}
