package session

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

func fill(t *testing.T, s *Store, id string, n int) {
	t.Helper()
	msgs := make([]*Message, n)
	for i := range msgs {
		msgs[i] = &Message{Role: RoleTool, Tool: "read",
			Parts: []Part{{Kind: PartToolResult, Text: fmt.Sprint(i + 1), SourcePath: "/f"}},
			Meta:  Meta{SourcePaths: []string{"/f"}}}
	}
	if err := s.AppendBulk(id, msgs); err != nil {
		t.Fatal(err)
	}
}

func keysOf(keys []string, id string) (mine, others []string) {
	for _, k := range keys {
		if k == "s/"+id || k == "d/"+id || k == "u/…/"+id || strings.HasPrefix(k, "m/"+id+"/#") {
			mine = append(mine, k)
		} else {
			others = append(others, k)
		}
	}
	return mine, others
}

func TestDeleteRemovesEveryKeyOfTheSession(t *testing.T) {
	old := deleteChunk
	deleteChunk = 700 // several chunks
	t.Cleanup(func() { deleteChunk = old })

	s := openTemp(t)
	// "abc" is a prefix of "abcd": a delete must not reach the longer ID.
	gone := create(t, s, Header{ID: "abc", Title: "to delete"})
	keep := create(t, s, Header{ID: "abcd", Title: "to keep"})
	fill(t, s, gone.ID, 5000)
	fill(t, s, keep.ID, 1200)
	if err := s.Rename(gone.ID, "renamed"); err != nil { // moves its index entry
		t.Fatal(err)
	}
	mine, others := keysOf(allKeys(t, s), gone.ID)
	if len(mine) != 5002 {
		t.Fatalf("before delete the session has %d keys, want 5002", len(mine))
	}
	if err := s.Delete(gone.ID); err != nil {
		t.Fatal(err)
	}
	after := allKeys(t, s)
	if left, _ := keysOf(after, gone.ID); len(left) != 0 {
		t.Fatalf("delete left %d keys, e.g. %q", len(left), left[0])
	}
	if strings.Join(after, "\n") != strings.Join(others, "\n") {
		t.Fatalf("delete touched other keys: %d before, %d after", len(others), len(after))
	}
	msgs, bad, err := s.Messages(keep.ID)
	if err != nil || len(bad) != 0 || len(msgs) != 1200 {
		t.Fatalf("other session after delete: %d messages, %v, %v", len(msgs), bad, err)
	}
	if _, err := s.Get(gone.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after delete: %v", err)
	}
	if err := s.Delete(gone.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	// The ID can be used again and starts empty.
	again := create(t, s, Header{ID: gone.ID, Title: "again"})
	if msgs, _, _ := s.Messages(again.ID); len(msgs) != 0 {
		t.Fatalf("re-created session has %d messages", len(msgs))
	}
}

// A crash after the header is gone but before all messages are: the next
// Open finishes the job.
func TestInterruptedDeleteFinishesAtOpen(t *testing.T) {
	s := openTemp(t)
	h := create(t, s, Header{Title: "t"})
	other := create(t, s, Header{Title: "other"})
	fill(t, s, h.ID, 300)
	fill(t, s, other.ID, 3)
	err := s.db.Update(func(txn *badger.Txn) error {
		for _, k := range recencyKeysOf(txn, h.ID) {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		if err := txn.Set(deletingKey(h.ID), nil); err != nil {
			return err
		}
		return txn.Delete(headerKey(h.ID))
	})
	if err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	if mine, _ := keysOf(allKeys(t, s), h.ID); len(mine) != 0 {
		t.Fatalf("after reopen %d keys of the deleted session remain, e.g. %q", len(mine), mine[0])
	}
	if msgs, _, _ := s.Messages(other.ID); len(msgs) != 3 {
		t.Fatalf("other session has %d messages", len(msgs))
	}
}

func TestCorruptMessagesReportedAndSkipped(t *testing.T) {
	s := openTemp(t)
	h := create(t, s, Header{Title: "t"})
	fill(t, s, h.ID, 6)
	setRaw(t, s, msgKey(h.ID, 2), []byte("\xff\xfe not json"))
	setRaw(t, s, msgKey(h.ID, 3), []byte(`{"sessionId":"other","seq":3,"role":"user"}`))
	setRaw(t, s, msgKey(h.ID, 4), []byte(`null`))
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Delete(msgKey(h.ID, 6)) }); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	msgs, bad, err := s.Messages(h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Seq != 1 || msgs[1].Seq != 5 || msgs[1].Text() != "5" {
		t.Fatalf("good messages: %+v", msgs)
	}
	var seqs []uint64
	for _, e := range bad {
		if e.SessionID != h.ID {
			t.Errorf("decode error names session %q", e.SessionID)
		}
		seqs = append(seqs, e.Seq)
	}
	if fmt.Sprint(seqs) != "[2 3 4 6]" {
		t.Fatalf("reported seqs %v, want [2 3 4 6]: %v", seqs, bad)
	}
	if !errors.Is(bad[3], ErrMissing) || bad[3].Error() != fmt.Sprintf("session %s message 6: record is missing", h.ID) {
		t.Fatalf("missing record reported as %v", bad[3])
	}
	if want := fmt.Sprintf("session %s message 2 cannot be decoded", h.ID); !strings.HasPrefix(bad[0].Error(), want) {
		t.Fatalf("message %q, want prefix %q", bad[0].Error(), want)
	}
	// A Range that starts after a gap still reports it.
	_, bad, _ = s.Range(h.ID, 5, 6)
	if len(bad) != 1 || bad[0].Seq != 6 {
		t.Fatalf("range 5-6 reports %v", bad)
	}
}

// Records a bulk append wrote past the header's count (it died before the
// header commit) stay invisible and are overwritten by the next append.
func TestUncommittedBulkRecordsInvisible(t *testing.T) {
	s := openTemp(t)
	h := create(t, s, Header{Title: "t"})
	fill(t, s, h.ID, 2)
	for seq := uint64(3); seq <= 5; seq++ {
		setRaw(t, s, msgKey(h.ID, seq), []byte(fmt.Sprintf(`{"sessionId":%q,"seq":%d,"role":"user","parts":[{"kind":"text","text":"orphan"}]}`, h.ID, seq)))
	}
	s = reopen(t, s)
	if msgs, bad, _ := s.Messages(h.ID); len(msgs) != 2 || len(bad) != 0 {
		t.Fatalf("orphans visible: %d messages, %v", len(msgs), bad)
	}
	if err := s.Append(h.ID, textMsg(RoleUser, "real 3")); err != nil {
		t.Fatal(err)
	}
	msgs, _, _ := s.Messages(h.ID)
	if len(msgs) != 3 || msgs[2].Text() != "real 3" {
		t.Fatalf("after append: %+v", msgs)
	}
}

func TestConcurrentAppendsKeepSeqContiguous(t *testing.T) {
	s := openTemp(t)
	h := create(t, s, Header{Title: "t"})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				var err error
				if w%2 == 0 {
					err = s.Append(h.ID, textMsg(RoleUser, fmt.Sprintf("w%d-%d", w, i)))
				} else {
					err = s.AppendBulk(h.ID, []*Message{textMsg(RoleUser, fmt.Sprintf("w%d-%d", w, i)), textMsg(RoleUser, fmt.Sprintf("w%d-%db", w, i))})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	msgs, bad, err := s.Messages(h.ID)
	if err != nil || len(bad) != 0 {
		t.Fatal(err, bad)
	}
	seen := map[string]bool{}
	for i, m := range msgs {
		if m.Seq != uint64(i+1) || seen[m.Text()] {
			t.Fatalf("position %d: seq %d text %q (seen before: %v)", i, m.Seq, m.Text(), seen[m.Text()])
		}
		seen[m.Text()] = true
	}
	if hd, _ := s.Get(h.ID); len(msgs) != 3*20+3*40 || hd.Count != uint64(len(msgs)) {
		t.Fatalf("%d messages, header count %d", len(msgs), hd.Count)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	s := openTemp(t)
	create(t, s, Header{Title: "t"})
	setRaw(t, s, versionKey, binary.BigEndian.AppendUint32(nil, SchemaVersion+1))
	dir := s.Dir()
	s.Close()
	_, err := Open(dir)
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("Open: %v, want ErrNewerSchema", err)
	}
	want := fmt.Sprintf("session store %s was written by a newer scrim (schema %d, this scrim reads up to %d); upgrade scrim", dir, SchemaVersion+1, SchemaVersion)
	if !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("message %q, want prefix %q", err, want)
	}
	// The refused store was released: the same process can open it raw.
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatalf("store still locked after a refused Open: %v", err)
	}
	db.Close()
}

func TestNotAStoreRefused(t *testing.T) {
	t.Run("folder with other files", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(dir); !errors.Is(err, ErrNotStore) || !strings.Contains(err.Error(), "main.go") {
			t.Fatalf("Open: %v", err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("Open wrote into a foreign folder: %v", entries)
		}
	})
	t.Run("badger database of something else", func(t *testing.T) {
		dir := t.TempDir()
		db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(func(txn *badger.Txn) error { return txn.Set([]byte("k"), []byte("v")) }); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if _, err := Open(dir); !errors.Is(err, ErrNotStore) {
			t.Fatalf("Open: %v", err)
		}
	})
	t.Run("new folder is created", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "a", "b")
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("store folder: %v %v", fi, err)
		}
	})
}

func TestSecondOpenInUse(t *testing.T) {
	s := openTemp(t)
	_, err := Open(s.Dir())
	if !errors.Is(err, ErrInUse) {
		t.Fatalf("second Open: %v", err)
	}
	// The contract's words, the holder (this process) and what to do.
	if want := "session store " + s.Dir() + " is in use by another scrim process (pid " + strconv.Itoa(os.Getpid()) + "): close it (q in the TUI) or wait for it to finish, then run this again"; err.Error() != want {
		t.Fatalf("message %q, want %q", err, want)
	}
	s.Close()
	s2, err := Open(s.Dir())
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	s2.Close()
	if err := s2.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// A lock held for a moment (a child process another goroutine is starting
// holds a copy of every descriptor from fork until exec) is waited out by
// a check and a repair as by Open; one that lasts is still refused.
func TestCheckWaitsOutABriefLock(t *testing.T) {
	s := openTemp(t)
	dir := s.Dir()
	s.Close()
	hold := func(d time.Duration) {
		t.Helper()
		lk, err := lockDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			time.Sleep(d)
			lk.unlock()
		}()
	}
	hold(50 * time.Millisecond)
	if _, err := Check(dir); err != nil {
		t.Fatalf("check beside a lock held for 50 ms: %v", err)
	}
	hold(50 * time.Millisecond)
	rep, err := Repair(dir, time.Now())
	if err != nil {
		t.Fatalf("repair beside a lock held for 50 ms: %v", err)
	}
	os.RemoveAll(rep.To)
	hold(2 * time.Second)
	if _, err := Check(dir); !errors.Is(err, ErrInUse) {
		t.Fatalf("check beside a lock held for good: %v", err)
	}
}

// Badger logs to stderr unless told not to; the TUI owns the terminal, so
// nothing the store does may print.
func TestBadgerNeverPrints(t *testing.T) {
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = out, out
	func() {
		defer func() { os.Stdout, os.Stderr = stdout, stderr }()
		dir := t.TempDir()
		s, err := Open(dir)
		if err != nil {
			t.Error(err)
			return
		}
		h, _ := s.Create(Header{Title: "t"})
		fill(t, s, h.ID, 3000)
		s.Delete(h.ID)
		s.Close()
		if s, err = Open(dir); err == nil {
			s.Close()
		}
		Open(filepath.Join(dir, "MANIFEST")) // an error path
	}()
	b, _ := os.ReadFile(out.Name())
	if len(b) != 0 {
		t.Fatalf("the store printed:\n%s", b)
	}
}

// Long ranges decode on several cores; they must give what the streaming
// Scan gives, holes and all.
func TestParallelRangeMatchesScan(t *testing.T) {
	s := openTemp(t)
	h := create(t, s, Header{Title: "t"})
	n := 3*parallelMin + 17
	fill(t, s, h.ID, n)
	for _, seq := range []uint64{1, 700, 701, 2500} {
		setRaw(t, s, msgKey(h.ID, seq), []byte("garbage"))
	}
	err := s.db.Update(func(txn *badger.Txn) error {
		for _, seq := range []uint64{900, 901, 902, uint64(n)} {
			if err := txn.Delete(msgKey(h.ID, seq)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]uint64{{1, uint64(n)}, {600, 600 + parallelMin}, {2, 2 + parallelMin - 2}} {
		got, gotBad, err := s.Range(h.ID, r[0], r[1])
		if err != nil {
			t.Fatal(err)
		}
		var want []Message
		wantBad, err := s.Scan(h.ID, r[0], r[1], func(m *Message) error {
			want = append(want, *m)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) || fmt.Sprint(gotBad) != fmt.Sprint(wantBad) {
			t.Fatalf("range %v: %d messages, errors %v; scan: %d, %v", r, len(got), gotBad, len(want), wantBad)
		}
		for i := range got {
			if got[i].Seq != want[i].Seq || got[i].Text() != want[i].Text() {
				t.Fatalf("range %v position %d: seq %d vs %d", r, i, got[i].Seq, want[i].Seq)
			}
		}
		if r[0] == 1 && (len(gotBad) != 6 || len(got) != n-8) { // 900–902 is one gap
			t.Fatalf("whole session: %d messages, %d errors: %v", len(got), len(gotBad), gotBad)
		}
	}
}

// A big file read is one big message: it must fit one Append.
func TestLargeMessageRoundTrip(t *testing.T) {
	s := openTemp(t)
	h := create(t, s, Header{Title: "t"})
	big := strings.Repeat("0123456789abcdef\n", 5<<20/17)
	m := &Message{Role: RoleTool, Tool: "read", Parts: []Part{{Kind: PartToolResult, Text: big, SourcePath: "/big.txt"}},
		Meta: Meta{SourcePaths: []string{"/big.txt"}}}
	if err := s.Append(h.ID, m, textMsg(RoleUser, "after")); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	msgs, bad, err := s.Messages(h.ID)
	if err != nil || len(bad) != 0 || len(msgs) != 2 || msgs[0].Text() != big || msgs[1].Text() != "after" {
		t.Fatalf("%d messages, %v, %v", len(msgs), bad, err)
	}
}

// TestScanAt: the messages at the Seqs asked for, in order and each once,
// read run by run in one snapshot, at most piece at a time; a record that
// cannot be decoded and one that is missing are reported, in order of Seq,
// and Seqs past the session's end are not there to report.
func TestScanAt(t *testing.T) {
	s := openTemp(t)
	h := create(t, s, Header{Title: "t"})
	other := create(t, s, Header{Title: "beside"})
	fill(t, s, h.ID, 50)
	fill(t, s, other.ID, 50) // keys right after the session's: never read
	setRaw(t, s, msgKey(h.ID, 21), []byte("\xff not json"))
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Delete(msgKey(h.ID, 30)) }); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	var got []uint64
	var pieces []int
	bad, err := s.ScanAt(h.ID, []uint64{1, 2, 3, 10, 20, 21, 22, 29, 30, 31, 49, 50, 51, 60}, 2, func(msgs []Message) error {
		pieces = append(pieces, len(msgs))
		for _, m := range msgs {
			if m.SessionID != h.ID || m.Text() != fmt.Sprint(m.Seq) {
				return fmt.Errorf("message %d: %+v", m.Seq, m)
			}
			got = append(got, m.Seq)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[1 2 3 10 20 22 29 31 49 50]" {
		t.Fatalf("read %v", got)
	}
	if slices.Max(pieces) > 2 {
		t.Fatalf("pieces of %v messages, want at most 2", pieces)
	}
	var seqs []uint64
	for _, e := range bad {
		seqs = append(seqs, e.Seq)
	}
	if fmt.Sprint(seqs) != "[21 30]" || !errors.Is(bad[1], ErrMissing) {
		t.Fatalf("reported %v", bad)
	}
	// fn's error stops the reading.
	stop := errors.New("stop")
	calls := 0
	if _, err := s.ScanAt(h.ID, []uint64{1, 5, 9, 13}, 1, func([]Message) error { calls++; return stop }); err != stop || calls != 1 {
		t.Fatalf("after fn failed: %v, %d calls", err, calls)
	}
}
