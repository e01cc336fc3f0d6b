package session

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/scrim-dev/scrim/internal/fsx"
)

// CheckReport is what Check found in a store.
type CheckReport struct {
	Dir      string
	Tables   string // what the table checksums said
	Sessions []SessionCheck
	Origins  int      // import records
	Problems []string // one line each, damage first
}

// SessionCheck is one session as Check read it.
type SessionCheck struct {
	Header   Header
	Readable []uint64 // Seqs of the messages that read and decode
	Problems []string
}

// Whole reports whether every message the header counts was read.
func (s *SessionCheck) Whole() bool {
	return len(s.Problems) == 0 && uint64(len(s.Readable)) == s.Header.Count
}

// Damaged reports whether Check found anything wrong.
func (r *CheckReport) Damaged() bool { return len(r.Problems) > 0 }

// Check reads every key of the store in dir, verifying every checksum and
// scrim's own invariants (a header's count against its messages, Seqs with
// no gap, the recency index, import records that name sessions), and says
// what is damaged. It never changes the store: Badger opens a snapshot of
// it, its small files copied and its logs linked, read-only, beside it.
func Check(dir string) (*CheckReport, error) {
	rep := &CheckReport{Dir: dir}
	err := withSnapshot(dir, func(db *badger.DB, openErr error) error {
		if err := checkManifest(dir); err != nil {
			rep.Problems = append(rep.Problems, damageWhat(err))
		}
		if openErr != nil {
			rep.Problems = append(rep.Problems, "Badger cannot open it: "+oneLine(strings.ReplaceAll(openErr.Error(), dir+"/", "")))
			return nil
		}
		rep.check(db)
		return nil
	})
	return rep, err
}

func damageWhat(err error) string {
	var de *DamagedError
	if errors.As(err, &de) {
		return de.What
	}
	return oneLine(err.Error())
}

func (rep *CheckReport) check(db *badger.DB) {
	rep.Tables = "every table's checksums match"
	if err := verifyTables(rep.Dir, db); err != nil {
		rep.Tables = damageWhat(err)
		rep.Problems = append(rep.Problems, "tables: "+rep.Tables+" (what follows is what can still be read)")
	}
	headers, recency, origins := map[string]*SessionCheck{}, map[string]bool{}, []Origin{}
	var order []string
	msgs := map[string][]uint64{}
	err := db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			k := item.Key()
			switch {
			case bytes.HasPrefix(k, []byte("s/")):
				id := string(k[2:])
				sc := &SessionCheck{}
				if err := checkedValue(item, func(v []byte) error { return decodeHeader(id, v, &sc.Header) }); err != nil {
					sc.Header.ID = id
					sc.Problems = append(sc.Problems, "its header cannot be read: "+damageWhat(err))
				}
				headers[id] = sc
				order = append(order, id)
			case bytes.HasPrefix(k, []byte("m/")) && len(k) > 11:
				id := string(k[2 : len(k)-9])
				seq := binary.BigEndian.Uint64(k[len(k)-8:])
				err := checkedValue(item, func(v []byte) error {
					var m Message
					return decodeMessage(id, seq, v, &m)
				})
				if err != nil {
					rep.Problems = append(rep.Problems, fmt.Sprintf("session %s message %d: %s", id, seq, damageWhat(err)))
					continue
				}
				msgs[id] = append(msgs[id], seq)
			case bytes.HasPrefix(k, []byte("u/")) && len(k) > 11:
				recency[string(k[11:])] = true
			case bytes.HasPrefix(k, []byte("o/")):
				var o Origin
				if err := checkedValue(item, func(v []byte) error { return json.Unmarshal(v, &o) }); err != nil {
					rep.Problems = append(rep.Problems, fmt.Sprintf("the import record of %s cannot be read: %s", k[2:], damageWhat(err)))
					continue
				}
				origins = append(origins, o)
			}
		}
		return nil
	})
	if err != nil {
		rep.Problems = append(rep.Problems, "reading the keys failed: "+oneLine(err.Error()))
	}
	for _, id := range order {
		sc := headers[id]
		seqs := msgs[id]
		for _, seq := range seqs {
			if seq >= 1 && seq <= sc.Header.Count {
				sc.Readable = append(sc.Readable, seq)
			}
		}
		if missing := missingRanges(sc.Readable, sc.Header.Count); missing != "" {
			what := "messages "
			if !strings.ContainsAny(missing, ",–") {
				what = "message "
			}
			sc.Problems = append(sc.Problems, what+missing+" cannot be read")
		}
		if !recency[id] && sc.Header.Title != "" || !recency[id] && sc.Header.Count > 0 {
			sc.Problems = append(sc.Problems, "it is missing from the recency index")
		}
		for _, p := range sc.Problems {
			rep.Problems = append(rep.Problems, fmt.Sprintf("session %s (%s): %s", id, oneLine(sc.Header.Title), p))
		}
		rep.Sessions = append(rep.Sessions, *sc)
	}
	// An import record that names a deleted session is harmless (the next
	// import of its file starts afresh): counted, not a problem.
	rep.Origins = len(origins)
}

// missingRanges lists the Seqs of 1..count not in have (sorted), as
// "3, 7–9"; "" when none is missing.
func missingRanges(have []uint64, count uint64) string {
	var parts []string
	next := uint64(1)
	flush := func(to uint64) {
		switch {
		case to < next:
		case to == next:
			parts = append(parts, fmt.Sprint(next))
		default:
			parts = append(parts, fmt.Sprintf("%d–%d", next, to))
		}
	}
	for _, s := range have {
		if s > next {
			flush(s - 1)
		}
		next = s + 1
	}
	flush(count)
	return strings.Join(parts, ", ")
}

// RepairReport says what Repair copied.
type RepairReport struct {
	To      string
	Whole   []string // sessions copied whole
	Partial []string // sessions copied with what could be read, and an event saying what could not
	Lost    []string // sessions of which nothing could be read
	Origins int      // import records copied (those whose sessions are all whole)
}

// Repair copies every readable session of the store in dir into a fresh
// store beside it (dir.repaired-TIME), never changing dir: whole sessions
// exactly (IDs, headers, messages), damaged ones with what can be read,
// renumbered, and an event message saying what could not. Import records
// are copied for files whose sessions are all whole.
func Repair(dir string, now time.Time) (*RepairReport, error) {
	rep := &RepairReport{To: repairedDir(dir, now)}
	if _, err := os.Stat(rep.To); err == nil {
		return nil, fmt.Errorf("%s already exists: move it away or wait a second", rep.To)
	}
	err := withSnapshot(dir, func(db *badger.DB, openErr error) error {
		if openErr != nil {
			return fmt.Errorf("Badger cannot open %s, so nothing of it can be read: %s", dir, oneLine(openErr.Error()))
		}
		check := &CheckReport{Dir: dir}
		check.check(db)
		out, err := Open(rep.To)
		if err != nil {
			return err
		}
		defer out.Close()
		whole := map[string]bool{}
		for i := range check.Sessions {
			sc := &check.Sessions[i]
			msgs := readMessages(db, sc)
			switch {
			case len(msgs) == 0 && sc.Header.Count > 0:
				rep.Lost = append(rep.Lost, sc.Header.ID)
				continue
			case sc.Whole() && uint64(len(msgs)) == sc.Header.Count:
				whole[sc.Header.ID] = true
				rep.Whole = append(rep.Whole, sc.Header.ID)
			default:
				rep.Partial = append(rep.Partial, sc.Header.ID)
				msgs = append(msgs, &Message{Role: RoleEvent, CreatedAt: now, Parts: []Part{{Kind: PartText,
					Text: fmt.Sprintf("scrim check --repair copied %d of the %d messages this session had from a damaged store (%s); the others could not be read",
						len(msgs), sc.Header.Count, strings.Join(sc.Problems, "; "))}}})
				for j, m := range msgs {
					m.Seq = uint64(j + 1)
				}
			}
			if err := out.restore(sc.Header, msgs); err != nil {
				return fmt.Errorf("copy session %s: %w", sc.Header.ID, err)
			}
		}
		return db.View(func(txn *badger.Txn) error {
			opts := badger.DefaultIteratorOptions
			opts.Prefix = []byte("o/")
			it := txn.NewIterator(opts)
			defer it.Close()
			for it.Rewind(); it.Valid(); it.Next() {
				var o Origin
				if checkedValue(it.Item(), func(v []byte) error { return json.Unmarshal(v, &o) }) != nil {
					continue
				}
				if !slices.ContainsFunc(mapValues(o.Sessions), func(id string) bool { return !whole[id] }) {
					if err := out.PutOrigin(&o); err != nil {
						return err
					}
					rep.Origins++
				}
			}
			return nil
		})
	})
	if err != nil {
		os.RemoveAll(rep.To) // a half-made copy helps nobody; dir is untouched
		return nil, err
	}
	return rep, nil
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// readMessages reads the readable messages of sc, in Seq order.
func readMessages(db *badger.DB, sc *SessionCheck) []*Message {
	var out []*Message
	db.View(func(txn *badger.Txn) error {
		for _, seq := range sc.Readable {
			item, err := txn.Get(msgKey(sc.Header.ID, seq))
			if err != nil {
				continue
			}
			m := &Message{}
			if checkedValue(item, func(v []byte) error { return decodeMessage(sc.Header.ID, seq, v, m) }) == nil {
				out = append(out, m)
			}
		}
		return nil
	})
	return out
}

// restore writes a session as given: its header (with Count set to its
// messages) and its messages with their Seqs, for Repair.
func (s *Store) restore(h Header, msgs []*Message) error {
	h.Count = uint64(len(msgs))
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	for _, m := range msgs {
		m.SessionID = h.ID
		b, err := encodeRecord(m)
		if err != nil {
			return err
		}
		if err := wb.SetEntry(messageEntry(h.ID, m, b)); err != nil {
			return err
		}
	}
	if err := wb.Flush(); err != nil {
		return err
	}
	defer s.links.changed(h.ID)
	return s.db.Update(func(txn *badger.Txn) error { return putHeader(txn, h, time.Time{}) })
}

// withSnapshot opens, read-only, a snapshot of the store in dir that Badger
// may do with as it likes: beside it, its manifest, key registry and tables
// copied, its value logs hard-linked (copied where links cannot be made),
// so that the store itself is never written. Badger would otherwise, even
// read-only, delete tables its manifest does not name.
func withSnapshot(dir string, fn func(db *badger.DB, openErr error) error) error {
	if err := holdsStore(dir); err != nil {
		return err
	}
	lk, err := whileInUse(func() (*dirLock, error) { return lockDir(dir) }) // as Open does
	if err != nil {
		return err
	}
	defer lk.unlock()
	parent, prefix := snapshotPrefix(dir)
	removeStaleSnapshots(parent, prefix)
	tmp, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return fmt.Errorf("make a snapshot beside %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || isLockName(name) {
			continue
		}
		if isLogName(name) {
			// An empty log, made by a process killed before it sized it,
			// never held an entry: Open removes it (removeEmptyLogs), and
			// the snapshot leaves it out. Linked, Badger would size the
			// store's own file, even read-only, and then refuse it.
			if fi, err := e.Info(); err == nil && fi.Size() == 0 {
				continue
			}
		}
		from, to := filepath.Join(dir, name), filepath.Join(tmp, name)
		if strings.HasSuffix(name, ".vlog") && os.Link(from, to) == nil {
			continue
		}
		if err := fsx.CopyNew(from, to); err != nil {
			return fmt.Errorf("snapshot %s: %w", from, err)
		}
	}
	mt, err := memtableFor(tmp) // one that fits a memtable log left by a kill
	if err != nil {
		return err
	}
	o := options(tmp).WithMemTableSize(mt)
	db, openErr := openBadger(o.WithReadOnly(true))
	// Badger wraps the error in words (%+v), not %w: it is known by them.
	if openErr != nil && strings.Contains(openErr.Error(), badger.ErrTruncateNeeded.Error()) {
		// A killed process leaves its logs longer than what they hold (a
		// log is made at its full size), and the next Open cuts them to
		// their entries; read-only, Badger refuses to, and every store
		// that was killed read as damaged. The snapshot's logs may be cut:
		// its memtable logs are copies, and the newest value log, the one
		// Badger cuts, is made one too instead of a link to the store's.
		if err := copyNewestValueLog(dir, tmp); err != nil {
			return fmt.Errorf("snapshot %s: %w", dir, err)
		}
		db, openErr = openBadger(o)
	}
	if openErr == nil {
		defer db.Close()
	}
	return fn(db, openErr)
}

// holdsStore says why dir is not a store to check: missing, a file, or a
// folder with none of a store's files (a mistyped path that happens to be
// a folder). Check would otherwise lock it, leaving scrim.lock among the
// user's files, and call it damaged ("no manifest found"). A store whose
// manifest is lost still has its tables and logs: that is damage, for
// Check to report.
func holdsStore(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("no session store at %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("no session store at %s: it is a file, not a folder: %w", dir, ErrNotStore)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read session store %s: %w", dir, err)
	}
	for _, e := range entries {
		switch n := e.Name(); {
		case n == "MANIFEST", n == "KEYREGISTRY", strings.HasSuffix(n, ".sst"), isLogName(n):
			return nil
		}
	}
	return fmt.Errorf("no session store at %s: the folder holds none of a store's files (a MANIFEST, tables, logs): %w", dir, ErrNotStore)
}

// snapshotPrefix is the folder a snapshot of the store in dir is made in,
// beside it, and the start of its name, which names the store: a check
// stopped by Ctrl-C or a kill leaves its snapshot (a copy of every table:
// 450 MB for a million messages), and the next check of the same store
// removes it (removeStaleSnapshots) without touching another store's.
func snapshotPrefix(dir string) (parent, prefix string) {
	dir = filepath.Clean(dir)
	return filepath.Dir(dir), "." + filepath.Base(dir) + ".scrim-check-"
}

// RemoveCheckSnapshots removes the snapshots checks of the store in dir
// have made beside it: for a check that is stopped (Ctrl-C), before its
// process exits, and by the next check for one that was killed. Badger
// reads a snapshot's files through their mappings, which outlive them.
func RemoveCheckSnapshots(dir string) {
	removeStaleSnapshots(snapshotPrefix(dir))
}

// repairedDir is the fresh store Repair at now makes of the store in dir.
func repairedDir(dir string, now time.Time) string {
	return strings.TrimRight(dir, string(filepath.Separator)) + ".repaired-" + now.Format("20060102-150405")
}

// removeStaleSnapshots removes the snapshots in parent whose names start
// with prefix: left by checks of the store that were stopped, since a
// check holds the store's lock while its snapshot lives, and the caller
// holds it now (or is that check, stopping, and may still be copying files
// into its own: removeBeingWritten). What cannot be removed stays; the
// check goes on.
func removeStaleSnapshots(parent, prefix string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		removeBeingWritten(filepath.Join(parent, e.Name()))
	}
}

// removeBeingWritten removes folder path, which this process may still be
// writing into: renamed first, files made after its entries were read
// would keep it from going; renamed, new files cannot be made in it by
// name.
func removeBeingWritten(path string) {
	if gone := path + ".gone"; os.Rename(path, gone) == nil {
		path = gone
	}
	os.RemoveAll(path)
}

// RemoveRepaired removes what Repair at now has made of the fresh store of
// dir, for a repair that is stopped: half a store, which would look like
// one to use.
func RemoveRepaired(dir string, now time.Time) { removeBeingWritten(repairedDir(dir, now)) }

// copyNewestValueLog puts in snapshot tmp of dir a copy of dir's newest
// value log in place of its link.
func copyNewestValueLog(dir, tmp string) error {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return err
	}
	newest := ""
	for _, e := range entries {
		// Value logs are named by number, at least six digits: the longest
		// name is the newest, and of names as long, the greatest.
		if n := e.Name(); strings.HasSuffix(n, ".vlog") && isLogName(n) && (len(n) > len(newest) || len(n) == len(newest) && n > newest) {
			newest = n
		}
	}
	if newest == "" {
		return nil
	}
	if err := os.Remove(filepath.Join(tmp, newest)); err != nil {
		return err
	}
	return fsx.CopyNewSparse(filepath.Join(dir, newest), filepath.Join(tmp, newest))
}

func isLockName(name string) bool { return name == "LOCK" || strings.HasSuffix(name, ".lock") }
