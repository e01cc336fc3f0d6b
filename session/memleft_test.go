package session

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOpenAfterKillWithABiggerMemtable: a process killed with entries in its
// memtable leaves them in the memtable's log, and the next open replays that
// log into a memtable of its own size. A log written with a bigger memtable
// than this scrim's (scrim's first builds had 16 MiB) held more than this
// scrim's memtable fits, and Badger ends the process at the replay
// ("Arena too small"): the user could not open the store at all. Open must
// replay it, with every message intact.
func TestOpenAfterKillWithABiggerMemtable(t *testing.T) {
	t.Parallel()
	dir, s := crashStore(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The writer: the store as a 16 MiB memtable opens it.
	db, err := openBadger(options(dir).WithMemTableSize(16 << 20))
	if err != nil {
		t.Fatal(err)
	}
	w := &Store{db: db, dir: dir, l0: l0Tables + 1, Now: s.Now}
	const n = 60000
	for seq := uint64(1); seq <= n; seq += 100 {
		msgs := make([]*Message, 100)
		for i := range msgs {
			msgs[i] = smallMessage(seq + uint64(i))
		}
		if err := w.Append(crashSession, msgs...); err != nil {
			t.Fatal(err)
		}
	}
	// Its files as a kill leaves them: every append returned was synced.
	killed := t.TempDir()
	copyFiles(t, dir, killed)
	db.Close()
	mems, _ := filepath.Glob(filepath.Join(killed, "*.mem"))
	if len(mems) != 1 {
		t.Fatalf("the writer left %d memtable logs, want 1", len(mems))
	}
	// Opening it flushes a memtable twice the usual size: it asks for the
	// room to (FreeToOpen, and the reserve its writes keep).
	got, usual, fresh := FreeToOpen(killed), FreeToOpen(t.TempDir()), FreeToOpen(filepath.Join(t.TempDir(), "new"))
	if got != 2*firstMemtable || usual != 16<<20 || fresh != 16<<20 {
		t.Fatalf("FreeToOpen: %d MiB with the log left, %d without, %d for a store not made yet; want 32, 16 and 16", got>>20, usual>>20, fresh>>20)
	}
	// The same after a replay of that log (which cuts it to what it holds)
	// and a kill before the flush that would have removed it.
	replayed := t.TempDir()
	copyFiles(t, killed, replayed)
	shrink(t, filepath.Join(replayed, filepath.Base(mems[0])))
	for name, dir := range map[string]string{"as left": killed, "replayed": replayed} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// In a process of its own: Badger ends the process that fails.
			cmd := exec.Command(os.Args[0], "-test.run=^TestOpenLeftChild$")
			cmd.Env = append(os.Environ(), "SCRIM_LEFT_STORE="+dir)
			out, err := cmd.CombinedOutput()
			want := fmt.Sprintf("%d messages, reserve %d", n, spaceReserve(firstMemtable))
			if err != nil || strings.TrimSpace(string(out)) != want {
				t.Fatalf("open after the kill: %v\n%s", err, out)
			}
		})
	}
}

// TestOpenLeftChild is the process TestOpenAfterKillWithABiggerMemtable
// checks and opens a store in: it prints how many of the messages it finds
// intact, and the reserve of free space the open keeps.
func TestOpenLeftChild(t *testing.T) {
	dir := os.Getenv("SCRIM_LEFT_STORE")
	if dir == "" {
		t.Skip("helper process of TestOpenAfterKillWithABiggerMemtable")
	}
	// Check reads it as the open will: a snapshot, its log replayed.
	rep, err := Check(dir)
	if err != nil || rep.Damaged() || len(rep.Sessions) != 1 {
		fmt.Printf("check: %v %+v\n", err, rep)
		os.Exit(1)
	}
	s, err := Open(dir)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	msgs, bad, err := s.Messages(crashSession)
	if err != nil || len(bad) != 0 {
		fmt.Println("read:", err, bad)
		os.Exit(1)
	}
	for i, m := range msgs {
		if m.Text() != smallMessage(uint64(i+1)).Text() {
			fmt.Printf("message %d: %q\n", i+1, m.Text())
			os.Exit(1)
		}
	}
	reserve := s.space.reserve
	if err := s.Close(); err != nil {
		fmt.Println("close:", err)
		os.Exit(1)
	}
	fmt.Printf("%d messages, reserve %d\n", len(msgs), reserve)
	os.Exit(0)
}

// shrink cuts the file at path after its last byte that is not zero, as a
// replay cuts a memtable log to the entries it holds.
func shrink(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := len(bytes.TrimRight(b, "\x00"))
	if n == len(b) || n == 0 {
		t.Fatalf("%s: %d of %d bytes in use", path, n, len(b))
	}
	if err := os.Truncate(path, int64(n)); err != nil {
		t.Fatal(err)
	}
}

// crashStore opens a new store in a temporary folder and creates the crash
// tests' session in it.
func crashStore(t *testing.T) (string, *Store) {
	t.Helper()
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(Header{ID: crashSession, Title: "crash"}); err != nil {
		t.Fatal(err)
	}
	return dir, s
}

// smallMessage is short enough to be kept in the LSM tree (and in the
// memtable) rather than in the value log.
func smallMessage(seq uint64) *Message {
	return &Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: fmt.Sprintf("message %d of a session written before the kill", seq)}}}
}

// copyFiles copies the regular files of dir into to.
func copyFiles(t *testing.T, dir, to string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if !e.Type().IsRegular() {
			continue
		}
		src, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.Create(filepath.Join(to, e.Name()))
		if err == nil {
			_, err = io.Copy(dst, src)
			if cerr := dst.Close(); err == nil {
				err = cerr
			}
		}
		src.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheckAfterKill: a store as a kill leaves it (its memtable log and its
// newest value log at their full size, holding less; logs made but not yet
// sized, empty) is not damaged: Check reads every message, the ones only in
// the memtable's log included, and says so; Repair copies the session
// whole; and neither changes a byte or the size of any file of the store.
func TestCheckAfterKill(t *testing.T) {
	t.Parallel()
	dir, s := crashStore(t)
	const n = 300
	for seq := uint64(1); seq <= n; seq++ {
		if err := s.Append(crashSession, crashMessage(seq)); err != nil { // long ones in the value log
			t.Fatal(err)
		}
	}
	killed := filepath.Join(t.TempDir(), "store")
	if err := os.Mkdir(killed, 0o700); err != nil {
		t.Fatal(err)
	}
	copyFiles(t, dir, killed)
	s.Close()
	// And a value log and a memtable log created but not yet sized, as a
	// kill at a rotation leaves them (TestOpenAfterKillBetweenCreateAndTruncate).
	for _, name := range []string{"000099.vlog", "00099.mem"} {
		if err := os.WriteFile(filepath.Join(killed, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := fileStates(t, killed)

	rep, err := Check(killed)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Damaged() || len(rep.Sessions) != 1 || len(rep.Sessions[0].Readable) != n {
		t.Fatalf("check of a killed store: %+v", rep)
	}
	rr, err := Repair(killed, time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Whole) != 1 || len(rr.Partial)+len(rr.Lost) != 0 {
		t.Fatalf("repair of a killed store: %+v", rr)
	}
	if after := fileStates(t, killed); !maps.Equal(before, after) {
		t.Fatalf("check or repair changed the store:\nbefore %v\nafter  %v", before, after)
	}
}

// fileStates is each file of dir with its size and a hash of its bytes.
func fileStates(t *testing.T, dir string) map[string]string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range es {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = fmt.Sprintf("%d bytes, %x", len(b), sha256.Sum256(b))
	}
	return out
}

// A check stopped before it removed its snapshot (Ctrl-C, a kill) leaves
// it beside the store; the next check of that store removes it, and leaves
// another store's alone, whatever the characters in their names.
func TestCheckRemovesItsStaleSnapshot(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "st[ore]*")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, prefix := snapshotPrefix(dir)
	stale := filepath.Join(parent, prefix+"123")
	other := filepath.Join(parent, ".st.scrim-check-456") // a store named "st"
	for _, d := range []string{stale, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "000001.sst"), []byte("table"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if rep, err := Check(dir); err != nil || rep.Damaged() {
		t.Fatalf("check: %v %+v", err, rep)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale snapshot is still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another store's snapshot is gone: %v", err)
	}
	es, _ := os.ReadDir(parent)
	if len(es) != 2 {
		t.Errorf("beside the store after the check: %v", es)
	}
}

// Check of something that is not a store (a mistyped path that is a
// folder, an empty one, a file) says so, and leaves nothing in it or
// beside it; a store that lost its manifest is damaged, not "not a store".
func TestCheckNotAStore(t *testing.T) {
	parent := t.TempDir()
	notes := filepath.Join(parent, "notes")
	empty := filepath.Join(parent, "empty")
	file := filepath.Join(parent, "file")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(notes, 0o700))
	must(os.WriteFile(filepath.Join(notes, "readme.txt"), []byte("mine"), 0o600))
	must(os.Mkdir(empty, 0o700))
	must(os.WriteFile(file, []byte("mine"), 0o600))
	for _, dir := range []string{notes, empty, file} {
		rep, err := Check(dir)
		if !errors.Is(err, ErrNotStore) {
			t.Errorf("check %s: %v %+v, want not a store", filepath.Base(dir), err, rep)
		}
	}
	if got := fileStates(t, notes); len(got) != 1 {
		t.Errorf("the folder holds %v after the check", got)
	}
	if es, _ := os.ReadDir(empty); len(es) != 0 {
		t.Errorf("the empty folder holds %v after the check", es)
	}
	if es, _ := os.ReadDir(parent); len(es) != 3 {
		t.Errorf("beside them after the checks: %v", es)
	}

	dir, s := crashStore(t)
	must(s.Close())
	must(os.Remove(filepath.Join(dir, "MANIFEST")))
	rep, err := Check(dir)
	if err != nil || !rep.Damaged() {
		t.Fatalf("check of a store without its manifest: %v %+v, want damaged", err, rep)
	}
}
