package session

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/table"

	"github.com/scrim-dev/scrim/internal/cores"
)

// ErrDamaged is what every error about a store whose files are damaged
// wraps: a checksum that does not match, a file Badger cannot parse.
var ErrDamaged = errors.New("session store is damaged")

// DamagedError says a store is damaged and what gave it away, in one line,
// with the way to find out more.
type DamagedError struct {
	Dir  string
	What string
}

func (e *DamagedError) Error() string {
	if e.Dir == "" {
		return fmt.Sprintf("the session store is damaged (%s): scrim check tells what can be recovered", e.What)
	}
	return fmt.Sprintf("session store %s is damaged (%s): scrim check %s tells what can be recovered", e.Dir, e.What, e.Dir)
}

func (e *DamagedError) Unwrap() error { return ErrDamaged }

func damaged(dir, format string, a ...any) error {
	return &DamagedError{Dir: dir, What: oneLine(fmt.Sprintf(format, a...))}
}

// openFailure turns an error of badger.Open into what to tell the user. A
// folder that is locked, not permitted, or on a full or read-only disk is
// not damaged; anything else Badger cannot open (a manifest or key
// registry whose checksum or magic does not match, a table or value log it
// cannot parse) is.
func openFailure(dir string, err error) error {
	msg := oneLine(err.Error())
	switch {
	case strings.Contains(msg, "Cannot acquire directory lock"):
		return inUse(dir, "")
	}
	// Badger flattens some errors to text on the way: the errno is put
	// back, so that callers tell a full, read-only or forbidden disk by
	// errors.Is, not by words.
	for _, e := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS, syscall.EACCES, syscall.EPERM, syscall.ENOTDIR} {
		if errors.Is(err, e) || strings.Contains(msg, e.Error()) {
			return &diskError{fmt.Errorf("open session store %s: %s", dir, msg), e}
		}
	}
	if errors.Is(err, fs.ErrPermission) {
		return &diskError{fmt.Errorf("open session store %s: %s", dir, msg), syscall.EACCES}
	}
	return damaged(dir, "%s", strings.ReplaceAll(msg, dir+"/", ""))
}

// verifyTables checks the checksum of every block of every table: Badger
// checks a block when it reads one, but an iterator that meets a bad block
// just stops, so a damaged table would read as fewer sessions or messages
// than there are. Tables hold keys and small values only (the large ones are
// in the value log, checked as each is read), a few MB for 100,000
// messages. Badger's own check dereferences a nil block when one is bad:
// that panic is a damaged table too.
func verifyTables(dir string, db *badger.DB) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = damaged(dir, "a table does not read: %v", r)
		}
	}()
	if err := db.VerifyChecksum(); err != nil {
		return damaged(dir, "%s", strings.ReplaceAll(oneLine(err.Error()), dir+"/", ""))
	}
	return nil
}

// value reads item's value with fn. Badger logs, and does not return, a
// value log entry whose checksum does not match: it hands back no value. No
// record scrim reads through here is ever empty, so an empty value where
// there should be one is that damage.
func (s *Store) value(item *badger.Item, fn func([]byte) error) error {
	err := checkedValue(item, fn)
	if err != nil {
		s.nameDir(err)
	}
	return err
}

// nameDir names the store's folder in err if it is a DamagedError that
// names none. Apart from value, whose every call reads a record: a
// DamagedError declared there, its address taken, was moved to the heap
// at each call, a million allocations in the TUI's first count at a
// million messages.
func (s *Store) nameDir(err error) {
	var de *DamagedError
	if errors.As(err, &de) && de.Dir == "" {
		de.Dir = s.dir
	}
}

// checkedValue is Store.value where the store is not at hand; the error
// names no folder (the command that prints it does).
func checkedValue(item *badger.Item, fn func([]byte) error) error {
	return item.Value(func(v []byte) error {
		if len(v) == 0 && item.ValueSize() > 0 {
			return damaged("", "the value of %s does not match its checksum", describeKey(item.Key()))
		}
		return fn(v)
	})
}

// describeKey names a key for a person: message 12 of session x.
func describeKey(k []byte) string {
	s := string(k)
	switch {
	case strings.HasPrefix(s, "m/") && len(k) > 10:
		id := s[2 : len(s)-9]
		return fmt.Sprintf("session %s message %d", id, beUint64(k[len(k)-8:]))
	case strings.HasPrefix(s, "s/"):
		return "the header of session " + s[2:]
	case strings.HasPrefix(s, "o/"):
		return "the import record of " + s[2:]
	}
	return fmt.Sprintf("key %q", s)
}

func beUint64(b []byte) uint64 {
	var n uint64
	for _, c := range b {
		n = n<<8 | uint64(c)
	}
	return n
}

// checkManifest reads Badger's MANIFEST as Badger will, and fails where
// Badger would quietly cut it: Badger takes a record that runs past the end
// of the file for one torn by a crash, drops it and every record after it,
// and then deletes the tables they listed. A crash while the manifest is
// written can leave such a tail; so can a single flipped bit of a record's
// length, which would then cost the store its tables. scrim refuses to open
// such a store, so that nothing is deleted, and says how to go on. A
// missing MANIFEST (a new store) is fine.
func checkManifest(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "MANIFEST"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return nil // Badger reports what it cannot read
	}
	if len(b) < 8 {
		return damaged(dir, "its MANIFEST is %d bytes, shorter than its header", len(b))
	}
	for at := 8; at < len(b); {
		if len(b)-at < 8 {
			return damaged(dir, "its MANIFEST ends in an incomplete record at byte %d", at)
		}
		n := int(binary.BigEndian.Uint32(b[at:]))
		if n > len(b)-at-8 {
			return damaged(dir, "its MANIFEST record at byte %d runs %d bytes past the end of the file", at, n-(len(b)-at-8))
		}
		at += 8 + n
	}
	return nil
}

// preopenTables opens each table the MANIFEST names as Badger is about to,
// but in this process's goroutines and under recover, and checks the
// checksum of every block: Badger opens them in goroutines of its own,
// where a panic over damaged bytes (an offset in a table's last block that
// runs off its end) cannot be caught and kills the process with a trace
// (found by the byte-flip test, on the runs whose random IDs put a flip
// there); the blocks for the reason verifyTables gives.
//
// Tables hold keys and small values only (the large ones are in the value
// log, checked as each is read), 449 MB at a million messages. Badger's own
// check (DB.VerifyChecksum) read them one after the other from its
// mappings, 0.4 s of one core at every start, most of it the first touch
// of each mapped page; here each table is read into a buffer of its
// reader's, on every core.
func preopenTables(dir string) error {
	fp, err := os.Open(filepath.Join(dir, "MANIFEST"))
	if err != nil {
		return nil // a new store, or Badger reports what it cannot read
	}
	opt := options(dir)
	mf, _, err := badger.ReplayManifestFile(fp, opt.ExternalMagicVersion, opt)
	fp.Close()
	if err != nil {
		return nil // checkManifest and Badger report it
	}
	ids := slices.Sorted(maps.Keys(mf.Tables))
	errs := make([]error, len(ids))
	// As many readers as the buffers' room holds the largest table of:
	// this store's tables are 2 MB, older stores' up to 8 MB.
	var largest int64
	for _, id := range ids {
		if fi, err := os.Stat(filepath.Join(dir, table.IDToFilename(id))); err == nil {
			largest = max(largest, fi.Size())
		}
	}
	readers := min(cores.N(), len(ids), max(1, int(tableReadRoom/max(largest, 1))))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range readers {
		wg.Go(func() {
			var buf []byte
			for i := int(next.Add(1) - 1); i < len(ids); i = int(next.Add(1) - 1) {
				// Each table as it was written: stores before
				// 2026-12-01 compressed their tables, and Badger
				// reads them so too.
				errs[i] = preopen(filepath.Join(dir, table.IDToFilename(ids[i])), ids[i], &buf, table.Options{
					ChkMode: opt.ChecksumVerificationMode, BlockSize: opt.BlockSize,
					BloomFalsePositive: opt.BloomFalsePositive, Compression: mf.Tables[ids[i]].Compression,
				})
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return damaged(dir, "table %s does not read: %s", table.IDToFilename(ids[i]), err)
		}
	}
	return nil
}

// tableReadRoom bounds the buffers preopenTables reads tables into.
const tableReadRoom = 32 << 20

// preopen reads table id from path into *buf (grown as needed), opens it
// as Badger does and checks every block.
func preopen(path string, id uint64, buf *[]byte, opt table.Options) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // Badger reports a missing table
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if int64(cap(*buf)) < fi.Size() {
		*buf = make([]byte, fi.Size())
	}
	data := (*buf)[:fi.Size()]
	if _, err := io.ReadFull(f, data); err != nil {
		return err
	}
	var t *table.Table
	if err := caught(func() (err error) { t, err = table.OpenInMemoryTable(data, id, &opt); return err }); err != nil {
		return err
	}
	// With Badger's ChkMode (OnBlockRead) every block is checked as it is
	// read, as DB.VerifyChecksum checks them. A bad block's error names
	// it through a nil block and a table without a file: a panic.
	if caught(t.VerifyChecksum) != nil {
		return errors.New("a block does not match its checksum")
	}
	return nil
}

// caught is fn's error, or the first line of what it panicked with.
func caught(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			msg, _, _ := strings.Cut(strings.TrimSpace(fmt.Sprint(r)), "\n")
			err = errors.New(msg)
		}
	}()
	return fn()
}

// diskError is a store that cannot be opened for a reason of its disk:
// its message, and the errno errors.Is finds.
type diskError struct {
	err   error
	errno syscall.Errno
}

func (e *diskError) Error() string { return e.err.Error() }

func (e *diskError) Is(target error) bool { return target == e.errno }

// inUse is ErrInUse for dir, naming the process that holds it (pid, from
// the lock file; "" when unknown) and what to do.
func inUse(dir, pid string) error {
	who := ""
	if _, err := strconv.Atoi(pid); err == nil {
		who = " (pid " + pid + ")"
	}
	return fmt.Errorf("session store %s is %w%s: close it (q in the TUI) or wait for it to finish, then run this again", dir, ErrInUse, who)
}
