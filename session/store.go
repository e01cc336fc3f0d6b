package session

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
	bopts "github.com/dgraph-io/badger/v4/options"
)

// SchemaVersion is the store layout this build writes and reads.
const SchemaVersion = 1

var (
	// ErrInUse: another process holds the store.
	ErrInUse = errors.New("in use by another scrim process")
	// ErrNotFound: no session with that ID or prefix.
	ErrNotFound = errors.New("no such session")
	// ErrAmbiguous: an ID prefix matches more than one session.
	ErrAmbiguous = errors.New("ambiguous session ID prefix")
	// ErrNewerSchema: the store was written by a newer scrim.
	ErrNewerSchema = errors.New("store written by a newer scrim")
	// ErrNotStore: the folder holds something that is not a scrim store.
	ErrNotStore = errors.New("not a scrim session store")
	// ErrMissing: a message the session header counts has no record.
	ErrMissing = errors.New("record is missing")
)

// Store is the Badger-backed session store. It is safe for concurrent use by
// the goroutines of one process; a second process is refused at Open.
type Store struct {
	db   *badger.DB
	dir  string
	lock *dirLock
	l0   int // Badger's bound on its first level's tables (open)
	// Now is the clock; tests may replace it.
	Now func() time.Time

	sessions  keyedMutex // serialises the writers of one session
	scanCache recordCache
	onImport  func(m *Message) []byte // ScanOnImport
	space     space                   // what is written, against what the disk has
	links     links                   // who is whose subagent (Subagents)
	closeOnce sync.Once
	closeErr  error
}

// Key layout (DESIGN.md). Integers are big-endian so that byte order is
// numeric order.
var versionKey = []byte("v")

func headerKey(id string) []byte { return []byte("s/" + id) }

func msgPrefix(id string) []byte { return []byte("m/" + id + "/") }

func msgKey(id string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(msgPrefix(id), seq)
}

func recencyKey(t time.Time, id string) []byte {
	k := binary.BigEndian.AppendUint64([]byte("u/"), uint64(t.UnixNano()))
	return append(append(k, '/'), id...)
}

// deletingKey marks a session whose header is gone but whose messages may not
// be yet: a message delete too big for one transaction is finished at the
// next Open if the process dies half-way.
func deletingKey(id string) []byte { return []byte("d/" + id) }

// options keeps Badger small and silent: it must never write to the terminal
// (the TUI owns it), and a session store is small next to a database.
func options(dir string) badger.Options {
	o := badger.DefaultOptions(dir).
		WithLogger(nil).
		WithSyncWrites(true). // an Append that returned survives a crash
		WithMetricsEnabled(false).
		// A memtable is an arena allocated whole (a little over its size),
		// and one fills while the last is flushed, a table built in memory:
		// at the peak of importing the 1,500-file tree, 16 MiB memtables
		// held 42 MiB of arenas and 28 MiB of builder buffers (compression
		// off), 8 MiB ones 21 and 12: an import's own memory peaks at
		// 60–71 MiB instead of 99–126, in the same CPU time with the
		// collector set as `scrim import` sets it (README, Import memory).
		WithMemTableSize(8 << 20).
		WithNumMemtables(2).
		// Tables hold keys and small values only (large ones go to the
		// value log, below). Compressing them saved 3% of the tree's
		// store, 39% of a session of small messages, but the builder holds
		// every block twice, plain and compressed, while it flushes a
		// memtable (28 MiB against 12 at 8 MiB memtables, 60 against 28 at
		// 16), and the block cache holds decompressed copies (`scrim show`
		// of a 1M-message session: 69–76 MiB anonymous, plain 15). Tables
		// written compressed before still read: each records its own.
		WithCompression(bopts.None).
		// No block cache: a plain table's block is read in place from its
		// mapping (and its checksum checked), and keeping blocks cached
		// cost more than reading them again. Every block read went through
		// ristretto's admission and eviction: `scrim show --format json` of
		// a 1M-message session took 8.5 s of CPU with a 32 MiB cache and
		// 6.2–6.8 s without; a first count 1.1 s of its 18.5 CPU-s. (An
		// older store's compressed tables decompress at every read.)
		WithBlockCacheSize(0).
		WithIndexCacheSize(16 << 20).
		// Values over 1 KiB (most tool results) go to the value log: written
		// once, never rewritten by compaction, and read back from an mmap,
		// which makes bulk appends and loading a long session several times
		// cheaper than keeping them in the LSM tree (docs/sessions.md).
		WithValueThreshold(1 << 10).
		WithValueLogFileSize(valueLogFileSize).
		WithNumCompactors(2).
		WithNumLevelZeroTables(l0Tables).
		WithNumLevelZeroTablesStall(8).
		// Every read is checked: a block of a table when it is read, a
		// value from the value log when it is read. Badger checks neither
		// by default, and a flipped byte then changes stored text silently.
		WithChecksumVerificationMode(bopts.OnBlockRead).
		WithVerifyValueChecksum(true)
	// Tables of one size (2 MB) at every level. A compaction builds each
	// table in a buffer twice its size, and with tables doubling at each
	// level below the base (8 MB at the bottom of a million-message
	// import), the compactions that follow an import or run beside a
	// first preview held 48 MB of builders at the preview's peak (heap
	// profile): the first preview of that import peaked at 119-143 MiB,
	// now 93-97, the import itself at 113 MiB, now 98, and the TUI's
	// first count there took 9.5-11.1 s, now 7.8-8.9 (README, What the
	// misses are made of). Reading is as fast; a store has more, smaller
	// files (Go raises the open-file limit to the hard limit at start).
	o.TableSizeMultiplier = 1
	return o
}

// Open opens (creating if needed) the store in dir. It refuses a folder held
// by another process (ErrInUse), written by a newer scrim (ErrNewerSchema),
// or holding other files (ErrNotStore).
func Open(dir string) (*Store, error) {
	return whileInUse(func() (*Store, error) { return open(dir, l0Tables+1) })
}

// OpenToImport is Open for a process that imports and then Settles: its
// Badger merges the first level's tables down at one fewer of them than
// every other process's. The memtable a store's close flushes adds a table
// there, and a store settled at one bound could be left one short of it:
// the next process to open it, the TUI started to look at what was
// imported, then merged them at its start, beside its first count (on the
// UI benchmark's million-message session, 0.25-0.3 s of the count's
// 4.3-4.8). An import that merged at one fewer itself instead spent a
// tenth more CPU on the tree of 1,500 transcripts; a process that mostly
// reads lets the first level hold one table more.
func OpenToImport(dir string) (*Store, error) {
	return whileInUse(func() (*Store, error) { return open(dir, l0Tables) })
}

// valueLogFileSize is the size of a value log file, and so the longest
// value Badger takes (maxRecord).
const valueLogFileSize = 64 << 20

// l0Tables is how many tables Badger's first level holds, in an importing
// process, before they are merged into the next.
const l0Tables = 4

// whileInUse calls try again while it fails with ErrInUse, for up to half
// a second. A store this process has just closed can still read as locked
// for a moment: flock locks belong to the open file, and a child process
// that another goroutine is starting holds a copy of every descriptor from
// fork until exec. So "in use" is only believed once it lasts.
func whileInUse[T any](try func() (T, error)) (T, error) {
	wait := 5 * time.Millisecond
	for deadline := time.Now().Add(500 * time.Millisecond); ; wait *= 2 {
		v, err := try()
		if !errors.Is(err, ErrInUse) || time.Now().Add(wait).After(deadline) {
			return v, err
		}
		time.Sleep(wait)
	}
}

func open(dir string, l0 int) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create session store %s: %w", dir, err)
	}
	if err := checkFolder(dir); err != nil {
		return nil, err
	}
	lk, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	db, err := openDB(dir, l0)
	if err != nil {
		lk.unlock()
		return nil, err
	}
	s := &Store{db: db, dir: dir, lock: lk, l0: l0, Now: time.Now}
	s.space.reserve = spaceReserve(db.Opts().MemTableSize)
	if err := s.checkVersion(); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.finishDeletes(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// openDB opens the Badger of the store in dir, whose lock the caller holds,
// with l0 tables in its first level before they are merged down.
func openDB(dir string, l0 int) (*badger.DB, error) {
	if err := removeEmptyLogs(dir); err != nil {
		return nil, err
	}
	if err := checkManifest(dir); err != nil {
		return nil, err
	}
	if err := preopenTables(dir); err != nil {
		return nil, err
	}
	mt, err := memtableFor(dir)
	if err != nil {
		return nil, err
	}
	db, err := openBadger(options(dir).WithNumLevelZeroTables(l0).WithMemTableSize(mt))
	if err != nil {
		return nil, openFailure(dir, err)
	}
	return db, nil
}

// removeEmptyLogs removes the value log and memtable log files of dir that
// are empty. Badger creates such a file and then sizes it and writes its
// header; a process killed in between leaves an empty file, which Badger
// then refuses to open ("Create a new file"), so that one unlucky kill would
// lock the user out of the store. An empty log never held an entry, and no
// key points into it, so removing it loses nothing. Called with the store's
// lock held, before Badger opens it.
func removeEmptyLogs(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read session store %s: %w", dir, err)
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !isLogName(name) {
			continue
		}
		if fi, err := e.Info(); err != nil || fi.Size() != 0 {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("remove the empty %s left in session store %s by a crash: %w", name, dir, err)
		}
	}
	return nil
}

// memtableFor is the memtable size the store in dir opens with: the usual
// one, or one that fits a memtable log a killed process left there
// (leftMemtableLog).
func memtableFor(dir string) (int64, error) {
	mt := options(dir).MemTableSize
	left, err := leftMemtableLog(dir)
	if err != nil || left == 0 {
		return mt, err
	}
	return max(mt, firstMemtable, left/2), nil
}

// FreeToOpen is the free space the disk of the store in dir must have
// before it is opened: room to flush both of its memtables (two of 8 MiB,
// more after a kill left a bigger one's log). Badger writes through
// memory-mapped files, and a write into a page the disk cannot back kills
// the process with SIGBUS instead of failing.
func FreeToOpen(dir string) uint64 {
	// A folder not made yet, or that cannot be read, has the usual
	// memtables (memtableFor returns them with the error); its open says
	// what is wrong.
	mt, _ := memtableFor(dir)
	return 2 * uint64(mt)
}

// leftMemtableLog returns the size of the biggest memtable log in dir, 0 if
// there is none: there is none after a clean close, which flushes the
// memtable and removes its log, but a killed process leaves its log, and
// the next open replays it into a memtable of the size that open asks for.
// Badger ends the process when the entries do not fit ("Arena too small"),
// so a log written with a bigger memtable than this scrim's would lock the
// user out of the store. A log is made twice the size of its memtable, and
// shrinks to what it holds only when a replay has read it (before the
// flush that removes it): half the biggest log, and at least the memtable
// of scrim's first builds (firstMemtable), fits every log scrim has written.
func leftMemtableLog(dir string) (int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("read session store %s: %w", dir, err)
	}
	var biggest int64
	for _, e := range entries {
		if !e.Type().IsRegular() || !isLogName(e.Name()) || !strings.HasSuffix(e.Name(), ".mem") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return 0, fmt.Errorf("read session store %s: %w", dir, err)
		}
		biggest = max(biggest, fi.Size())
	}
	return biggest, nil
}

// firstMemtable is the memtable size of scrim's first builds, the biggest
// it has had.
const firstMemtable = 16 << 20

// isLogName reports whether name is a Badger log file: a number (six digits
// or more for a value log, five for a memtable log) and .vlog or .mem.
func isLogName(name string) bool {
	stem, ok := strings.CutSuffix(name, ".vlog")
	if !ok {
		stem, ok = strings.CutSuffix(name, ".mem")
	}
	if !ok || len(stem) < 5 {
		return false
	}
	for _, c := range []byte(stem) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// checkFolder refuses to turn a folder with other files into a store: a
// mistyped --store must not litter someone's project with Badger files.
func checkFolder(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read session store %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.Name() == "MANIFEST" {
			return nil
		}
	}
	for _, e := range entries {
		if e.Name() != lockName {
			return fmt.Errorf("session store %s holds other files (%s); pass an empty or new folder: %w", dir, e.Name(), ErrNotStore)
		}
	}
	return nil
}

func (s *Store) checkVersion() error {
	return s.db.Update(func(txn *badger.Txn) error {
		item, err := txn.Get(versionKey)
		if errors.Is(err, badger.ErrKeyNotFound) {
			if !isEmpty(txn) {
				return fmt.Errorf("session store %s holds data but no scrim schema version: %w", s.dir, ErrNotStore)
			}
			return txn.Set(versionKey, binary.BigEndian.AppendUint32(nil, SchemaVersion))
		}
		if err != nil {
			return fmt.Errorf("read session store %s version: %w", s.dir, err)
		}
		v, err := item.ValueCopy(nil)
		if err != nil || len(v) != 4 {
			return fmt.Errorf("session store %s has an unreadable schema version: %w", s.dir, ErrNotStore)
		}
		if n := binary.BigEndian.Uint32(v); n > SchemaVersion {
			return fmt.Errorf("session store %s was written by a newer scrim (schema %d, this scrim reads up to %d); upgrade scrim: %w",
				s.dir, n, SchemaVersion, ErrNewerSchema)
		}
		return nil
	})
}

func isEmpty(txn *badger.Txn) bool {
	opts := badger.DefaultIteratorOptions
	opts.PrefetchValues = false
	it := txn.NewIterator(opts)
	defer it.Close()
	it.Rewind()
	return !it.Valid()
}

// Dir is the store's folder.
func (s *Store) Dir() string { return s.dir }

// Close flushes and releases the store. Calling it again does nothing.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.flushRecords()
		s.closeErr = s.db.Close()
		s.lock.unlock()
	})
	return s.closeErr
}

// NewID returns a fresh random session ID (16 hex digits).
func NewID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// ValidID reports whether id can name a session: 1–128 of [A-Za-z0-9._-].
// A '/' would let one session's keys fall under another's prefix.
func ValidID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// keyedMutex hands out one mutex per key, dropped when nobody holds it.
type keyedMutex struct {
	mu sync.Mutex
	m  map[string]*keyedEntry
}

type keyedEntry struct {
	sync.Mutex
	refs int
}

func (k *keyedMutex) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*keyedEntry{}
	}
	e := k.m[key]
	if e == nil {
		e = &keyedEntry{}
		k.m[key] = e
	}
	e.refs++
	k.mu.Unlock()
	e.Lock()
	return func() {
		e.Unlock()
		k.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
}

// openBadger is badger.Open, with a panic (a table or log Badger cannot
// parse, met on this goroutine) returned as an error.
func openBadger(o badger.Options) (db *badger.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return badger.Open(o)
}
