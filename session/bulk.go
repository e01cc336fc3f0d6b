package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Bulk is one atomic import: messages of one or more sessions stream through
// a WriteBatch as they are produced, and the session headers, revisions of
// already visible messages and the origin record commit last, in one
// transaction. Until that commit nothing of the import is visible: a new
// session has no header, and a continued session's header still counts only
// its old messages (the store never reads past Count). A crash leaves
// unreferenced records, which the next BeginBulk deletes.
//
// A Bulk is used by one goroutine.
type Bulk struct {
	s        *Store
	wb       *badger.WriteBatch
	sessions map[string]*bulkSession
	order    []string // session IDs in registration order
	revs     []revision
	replaced []string
	unlocks  []func() // writer locks of the replaced sessions
	pending  int      // bytes put since the last flush
	// Until an import holds flushBytes, its messages wait here and go in
	// the commit's own transaction: a small transcript (most of a real
	// ~/.claude) then costs one synced write, not three, and needs no
	// markers, as nothing of it is written before it is whole.
	held    []heldRecord
	spilled bool // held was handed to the WriteBatch: markers are down
	grouped bool // handed to a Group, which commits and releases it
	done    bool
	scan    *importScan // ScanOnImport's records of what is put; nil until the first
}

type heldRecord struct {
	key, val []byte
	meta     byte // recordMeta
}

// maxHeld bounds the records held, well below what one Badger
// transaction takes.
const maxHeld = 4096

type bulkSession struct {
	unlock    func() // the store's per-session writer lock, held until the import ends
	h         Header // the header to commit; Count is the committed count until Commit
	committed uint64 // Count at the start
	next      uint64 // next Seq to reserve
	put       uint64 // messages put
	isNew     bool
	edits     []func(*Header)
	latest    time.Time // the newest message put: the session's "updated"
}

type revision struct {
	id  string
	seq uint64
	fn  func(*Message)
}

// flushBytes bounds the encoded messages an import holds before handing
// them to Badger and waiting for them to be written: a WriteBatch counts
// values bound for the value log as pointers, so by itself it would keep
// thousands of large tool results in memory.
const flushBytes = 1 << 20

// active holds the sessions that a Bulk of this process is writing, so that
// cleaning up after crashed imports never touches a running one.
var active = struct {
	sync.Mutex
	ids map[string]int
}{ids: map[string]int{}}

func markerKey(id string) []byte { return []byte("i/" + id) }

// BeginBulk starts an import. What crashed imports left is not its
// business: an import run calls CleanImports once, before its first Bulk
// (a prefix scan per file made re-importing a tree quadratic), and the
// records a crash left beyond a session's Count are never read.
func (s *Store) BeginBulk() (*Bulk, error) {
	return &Bulk{s: s, wb: s.db.NewWriteBatch(), sessions: map[string]*bulkSession{}}, nil
}

// register marks id as being written, durably, before any of its messages
// is (once the import spills; see held). bs.unlock releases the session's writer lock, which the caller took
// and the import holds until it ends: no Append of this process can slip
// messages in under the ones the import reserved.
func (b *Bulk) register(bs *bulkSession) error {
	id := bs.h.ID
	if b.spilled {
		if err := b.s.db.Update(func(txn *badger.Txn) error { return txn.Set(markerKey(id), nil) }); err != nil {
			bs.unlock()
			return fmt.Errorf("start import into session %s: %w", id, err)
		}
	}
	active.Lock()
	active.ids[b.s.dir+"\x00"+id]++
	active.Unlock()
	b.sessions[id] = bs
	b.order = append(b.order, id)
	return nil
}

// NewSession adds a session that becomes visible at Commit. ID is assigned
// when empty.
func (b *Bulk) NewSession(h Header) (string, error) {
	if h.ID == "" {
		h.ID = NewID()
	}
	if _, dup := b.sessions[h.ID]; dup {
		return "", fmt.Errorf("session %s is already part of this import", h.ID)
	}
	unlock := b.s.sessions.lock(h.ID)
	if _, err := b.s.Get(h.ID); err == nil {
		unlock()
		return "", fmt.Errorf("session %s already exists", h.ID)
	}
	h.Count = 0
	return h.ID, b.register(&bulkSession{unlock: unlock, h: h, next: 1, isNew: true})
}

// Continue adds an existing session; new messages go after its last one.
func (b *Bulk) Continue(id string) (Header, error) {
	if _, dup := b.sessions[id]; dup {
		return Header{}, fmt.Errorf("session %s is already part of this import", id)
	}
	unlock := b.s.sessions.lock(id)
	h, err := b.s.Get(id)
	if err != nil {
		unlock()
		return h, err
	}
	return h, b.register(&bulkSession{unlock: unlock, h: h, committed: h.Count, next: h.Count + 1})
}

func (b *Bulk) session(id string) (*bulkSession, error) {
	bs, ok := b.sessions[id]
	if !ok {
		return nil, fmt.Errorf("session %s is not part of this import", id)
	}
	return bs, nil
}

// Reserve returns the next Seq of session id. A message may be reserved early
// (to keep its place) and Put later; Commit refuses holes.
func (b *Bulk) Reserve(id string) uint64 {
	bs := b.sessions[id]
	if bs == nil {
		return 0
	}
	seq := bs.next
	bs.next++
	return seq
}

// Count is what session id's message count will be when the import
// commits; ok is false for a session the import has not taken up.
func (b *Bulk) Count(id string) (n uint64, ok bool) {
	bs := b.sessions[id]
	if bs == nil {
		return 0, false
	}
	return bs.next - 1, true
}

// Put writes m, whose SessionID and a reserved Seq must be set. ID and
// CreatedAt are filled in when empty. m is encoded at once and not kept.
func (b *Bulk) Put(m *Message) error {
	bs, err := b.session(m.SessionID)
	if err != nil {
		return err
	}
	if m.Seq <= bs.committed || m.Seq >= bs.next {
		return fmt.Errorf("session %s: message seq %d was not reserved", m.SessionID, m.Seq)
	}
	if m.ID == "" {
		m.ID = fmt.Sprintf("%s-%d", m.SessionID, m.Seq)
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = b.s.Now()
	}
	if m.Parts == nil {
		m.Parts = []Part{}
	}
	if err := m.Validate(); err != nil {
		return fmt.Errorf("session %s message %d: %w", m.SessionID, m.Seq, err)
	}
	v, err := encodeRecord(m)
	if err != nil {
		return fmt.Errorf("encode session %s message %d: %w", m.SessionID, m.Seq, err)
	}
	if err := b.s.room(len(v)); err != nil {
		return err
	}
	if b.s.onImport != nil {
		if b.scan == nil {
			b.scan = newImportScan(b.s.onImport)
		}
		b.scan.add(bs.committed+1, m)
	}
	bs.put++
	b.pending += len(v)
	if !b.spilled {
		b.held = append(b.held, heldRecord{msgKey(m.SessionID, m.Seq), v, recordMeta(m)})
		if b.pending < flushBytes && len(b.held) < maxHeld {
			return b.noteMessage(bs, m)
		}
		if err := b.spill(); err != nil {
			return fmt.Errorf("write session %s: %w", m.SessionID, err)
		}
	} else if err := b.wb.SetEntry(messageEntry(m.SessionID, m, v)); err != nil {
		return fmt.Errorf("write session %s message %d: %w", m.SessionID, m.Seq, err)
	}
	if b.pending >= flushBytes {
		if err := b.flush(); err != nil {
			return fmt.Errorf("write session %s: %w", m.SessionID, err)
		}
		b.wb, b.pending = b.s.db.NewWriteBatch(), 0
	}
	return b.noteMessage(bs, m)
}

// spill starts streaming: the markers of the sessions so far go down,
// durably, then the held records into the WriteBatch.
func (b *Bulk) spill() error {
	err := b.s.db.Update(func(txn *badger.Txn) error {
		for _, id := range b.order {
			if err := txn.Set(markerKey(id), nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	b.spilled = true
	for _, r := range b.held {
		if err := b.wb.SetEntry(badger.NewEntry(r.key, r.val).WithMeta(r.meta)); err != nil {
			return err
		}
	}
	b.held = nil
	return nil
}

// noteMessage updates the header to commit for m.
func (b *Bulk) noteMessage(bs *bulkSession, m *Message) error {
	if m.Role == RoleAssistant && m.Model != "" {
		bs.h.LastModel = m.Model
	}
	if bs.isNew && (bs.h.CreatedAt.IsZero() || m.CreatedAt.Before(bs.h.CreatedAt)) {
		bs.h.CreatedAt = m.CreatedAt
	}
	if m.CreatedAt.After(bs.latest) {
		bs.latest = m.CreatedAt
	}
	return nil
}

// flush hands the batch to Badger and waits for it.
func (b *Bulk) flush() error { return b.wb.Flush() }

// Add reserves the next Seq of session id for m and writes it.
func (b *Bulk) Add(id string, m *Message) error {
	if _, err := b.session(id); err != nil {
		return err
	}
	m.SessionID, m.Seq = id, b.Reserve(id)
	return b.Put(m)
}

// Revise changes a message already written (by this import or an earlier
// one) when the import commits, in the same transaction.
func (b *Bulk) Revise(id string, seq uint64, fn func(*Message)) {
	b.revs = append(b.revs, revision{id, seq, fn})
}

// EditHeader changes session id's header at Commit (title, work folder…).
// ID and Count are the store's.
func (b *Bulk) EditHeader(id string, fn func(*Header)) {
	if bs := b.sessions[id]; bs != nil {
		bs.edits = append(bs.edits, fn)
	}
}

// Replace deletes session id when the import commits: the import supersedes
// it (its origin file was rewritten).
func (b *Bulk) Replace(id string) error {
	if _, ok := b.sessions[id]; ok || slices.Contains(b.replaced, id) {
		return fmt.Errorf("session %s cannot be both written and replaced", id)
	}
	unlock := b.s.sessions.lock(id)
	err := b.s.db.Update(func(txn *badger.Txn) error { return txn.Set(markerKey(id), nil) })
	if err != nil {
		unlock()
		return err
	}
	b.replaced = append(b.replaced, id)
	b.unlocks = append(b.unlocks, unlock)
	return nil
}

// Commit makes the import visible at once: headers, revisions and origin (if
// not nil) in one transaction. Sessions of the import that received no
// message are not created.
func (b *Bulk) Commit(o *Origin) (err error) {
	if err := b.ready(); err != nil {
		return err
	}
	committed := false
	defer func() { b.end(committed) }()
	if b.spilled {
		if err := b.flush(); err != nil {
			return fmt.Errorf("write import: %w", err)
		}
	}
	now := b.s.Now()
	if err := b.s.db.Update(func(txn *badger.Txn) error { return b.commitIn(txn, now, o) }); err != nil {
		return fmt.Errorf("commit import: %w", err)
	}
	committed = true
	return b.dropReplaced()
}

// ready checks that b can commit: not finished, no holes.
func (b *Bulk) ready() error {
	if b.done || b.grouped {
		return errors.New("import already finished")
	}
	for _, id := range b.order {
		bs := b.sessions[id]
		if bs.put != bs.next-1-bs.committed {
			return fmt.Errorf("session %s: %d messages reserved but %d written", id, bs.next-1-bs.committed, bs.put)
		}
	}
	return nil
}

// commitIn writes what makes the import visible into txn: the held
// records, headers, revisions, the replaced sessions' headers gone, the
// origin record, and the markers gone.
func (b *Bulk) commitIn(txn *badger.Txn, now time.Time, o *Origin) error {
	for _, r := range b.held {
		if err := txn.SetEntry(badger.NewEntry(r.key, r.val).WithMeta(r.meta)); err != nil {
			return err
		}
	}
	if err := b.commitHeaders(txn, now); err != nil {
		return err
	}
	if err := b.commitRevisions(txn); err != nil {
		return err
	}
	for _, id := range b.replaced {
		if err := deleteHeader(txn, id); err != nil {
			return err
		}
	}
	if o != nil {
		o.ImportedAt = now
		if err := putOrigin(txn, o); err != nil {
			return err
		}
	}
	if b.spilled {
		for _, id := range b.order {
			if err := txn.Delete(markerKey(id)); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropReplaced deletes the records of the sessions the import replaced,
// once their headers are gone.
func (b *Bulk) dropReplaced() error {
	for _, id := range b.replaced {
		// The header is gone, so these records are already invisible; a crash
		// here leaves them to CleanImports (the marker is still set).
		if err := b.s.deletePrefix(msgPrefix(id)); err != nil {
			return err
		}
		b.s.settleRecords(id, 0, 1<<64-1) // or they would be written after
		if err := b.s.deletePrefix(scanPrefix(id)); err != nil {
			return err
		}
		if err := b.s.dropCounts(id); err != nil {
			return err
		}
		if err := b.s.db.Update(func(txn *badger.Txn) error { return txn.Delete(markerKey(id)) }); err != nil {
			return err
		}
	}
	return nil
}

// Group commits small imports together: each still all or nothing, but
// several share one synced transaction. On ext4 each sync of data appended
// to Badger's memory-mapped logs costs about half a megabyte of metadata
// writes, so a tree of small transcripts committed one by one writes four
// to five times the store's size. A Group is used by one goroutine.
type Group struct {
	s       *Store
	bulks   []*Bulk
	origins []*Origin
	bytes   int // held bytes
	records int
}

// Group limits: below Badger's limit on one transaction (counted in
// records; large values count as pointers), and small enough that a
// crash loses little work.
const (
	groupBytes   = 8 << 20
	groupRecords = 8192
	groupBulks   = 64
)

// NewGroup starts a group of imports.
func (s *Store) NewGroup() *Group { return &Group{s: s} }

// Commit commits b with o now, when it is big (it streamed), or has it
// wait for g.Commit, when it is small; waiting reports which. A waiting
// import holds its sessions until then; Cancel does nothing to it.
func (g *Group) Add(b *Bulk, o *Origin) (waiting bool, err error) {
	if b.spilled || len(b.replaced) > 0 || len(b.revs) > 0 {
		return false, b.Commit(o)
	}
	if err := b.ready(); err != nil {
		return false, err
	}
	b.grouped = true
	g.bulks = append(g.bulks, b)
	g.origins = append(g.origins, o)
	g.bytes += b.pending
	g.records += len(b.held) + len(b.order) + 1
	return true, nil
}

// Full reports whether g should commit before taking more.
func (g *Group) Full() bool {
	return g.bytes >= groupBytes || g.records >= groupRecords || len(g.bulks) >= groupBulks
}

// Len is the number of imports waiting.
func (g *Group) Len() int { return len(g.bulks) }

// Commit makes every waiting import visible at once and releases them; it
// returns each one's error, in the order they were added (nil when all
// committed). On an error of the shared transaction none is visible.
func (g *Group) Commit() []error {
	bulks, origins := g.bulks, g.origins
	g.bulks, g.origins, g.bytes, g.records = nil, nil, 0, 0
	errs := g.commit(bulks, origins)
	for i, b := range bulks {
		b.end(errs == nil || errs[i] == nil)
	}
	return errs
}

// commit is Commit's transactions: one for all of bulks, or, if that is too
// big, one each.
func (g *Group) commit(bulks []*Bulk, origins []*Origin) []error {
	if len(bulks) == 0 {
		return nil
	}
	now := g.s.Now()
	err := g.s.db.Update(func(txn *badger.Txn) error {
		for i, b := range bulks {
			if err := b.commitIn(txn, now, origins[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		return nil
	}
	errs := make([]error, len(bulks))
	if !errors.Is(err, badger.ErrTxnTooBig) {
		for i := range errs {
			errs[i] = fmt.Errorf("commit import: %w", err)
		}
		return errs
	}
	// More than the limits above foresaw: one transaction each.
	failed := false
	for i, b := range bulks {
		if err := g.s.db.Update(func(txn *badger.Txn) error { return b.commitIn(txn, now, origins[i]) }); err != nil {
			errs[i], failed = fmt.Errorf("commit import: %w", err), true
		}
	}
	if !failed {
		return nil
	}
	return errs
}

func (b *Bulk) commitHeaders(txn *badger.Txn, now time.Time) error {
	for _, id := range b.order {
		bs := b.sessions[id]
		if bs.isNew && bs.put == 0 {
			continue
		}
		h := bs.h
		for _, fn := range bs.edits {
			fn(&h)
		}
		h.ID, h.Count = id, bs.next-1
		old := time.Time{}
		if !bs.isNew {
			cur, err := getHeader(txn, id)
			if err != nil {
				return err
			}
			if cur.Count != bs.committed {
				return fmt.Errorf("session %s changed during the import; import again", id)
			}
			old = cur.UpdatedAt
		}
		if bs.put == 0 && !bs.isNew && len(bs.edits) == 0 {
			continue
		}
		// An imported session was updated when its newest message was
		// written (the transcript's time), not when it was imported; never
		// earlier than it stood, never later than now.
		h.UpdatedAt = now
		if !bs.latest.IsZero() && bs.latest.Before(now) {
			h.UpdatedAt = bs.latest
			if old.After(h.UpdatedAt) {
				h.UpdatedAt = old
			}
		}
		if h.CreatedAt.IsZero() {
			h.CreatedAt = now
		}
		if err := putHeader(txn, h, old); err != nil {
			return err
		}
	}
	return nil
}

func (b *Bulk) commitRevisions(txn *badger.Txn) error {
	bumped := map[string]bool{}
	for _, r := range b.revs {
		if !bumped[r.id] {
			// Figures kept over the session's messages no longer hold.
			if err := bumpRevision(txn, r.id); err != nil {
				return err
			}
			bumped[r.id] = true
		}
		item, err := txn.Get(msgKey(r.id, r.seq))
		if err != nil {
			return fmt.Errorf("revise session %s message %d: %w", r.id, r.seq, err)
		}
		var m Message
		if err := b.s.value(item, func(v []byte) error { return json.Unmarshal(v, &m) }); err != nil {
			return fmt.Errorf("revise session %s message %d: %w", r.id, r.seq, err)
		}
		r.fn(&m)
		m.SessionID, m.Seq = r.id, r.seq
		if err := m.Validate(); err != nil {
			return fmt.Errorf("revise session %s message %d: %w", r.id, r.seq, err)
		}
		v, err := json.Marshal(&m)
		if err != nil {
			return err
		}
		if err := txn.SetEntry(messageEntry(r.id, &m, v)); err != nil {
			return err
		}
	}
	return nil
}

func deleteHeader(txn *badger.Txn, id string) error {
	h, err := getHeader(txn, id)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	var de DecodeError
	if err != nil && !errors.As(err, &de) {
		return err
	}
	if err == nil {
		if err := txn.Delete(recencyKey(h.UpdatedAt, id)); err != nil {
			return err
		}
	}
	return txn.Delete(headerKey(id))
}

// Cancel abandons the import; nothing of it becomes visible. Records already
// written are removed.
func (b *Bulk) Cancel() {
	if b.done || b.grouped {
		return
	}
	b.done = true
	b.wb.Cancel()
	// While the sessions are still locked: no writer can have added to
	// them since. What fails here, the next CleanImports removes.
	if b.spilled {
		for _, id := range b.order {
			_ = b.s.cleanImport(id)
		}
	}
	b.release()
	b.stopScan()
}

func (b *Bulk) finish() {
	b.done = true
	b.wb.Cancel()
	b.release()
}

// release unlocks the sessions and marks them no longer written.
func (b *Bulk) release() {
	for _, id := range b.order {
		b.sessions[id].unlock()
	}
	for _, unlock := range b.unlocks {
		unlock()
	}
	active.Lock()
	for _, id := range b.order {
		k := b.s.dir + "\x00" + id
		if active.ids[k]--; active.ids[k] <= 0 {
			delete(active.ids, k)
		}
	}
	active.Unlock()
}
