//go:build unix

package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// TestImportKilledIsAllOrNothing kills a real `scrim import` (SIGKILL)
// while it writes a large transcript: reopening the store shows none of it,
// and importing again imports it whole, once.
func TestImportKilledIsAllOrNothing(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "big.jsonl")
	f, _ := os.Create(file)
	want, err := importtest.WriteClaudeTranscript(f, 40<<20)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	interrupted := 0
	for _, at := range []int64{1 << 20, 3 << 20, 6 << 20} {
		store := filepath.Join(dir, "store", "at"+time.Duration(at).String())
		cmd := scrimProcess(t, "import", "claude", file, "--store", store)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		killed := false
	poll:
		for {
			select {
			case <-done:
				break poll
			case <-time.After(5 * time.Millisecond):
				if du(store) >= at {
					cmd.Process.Signal(syscall.SIGKILL)
					<-done
					killed = true
					break poll
				}
			}
		}
		st, err := session.Open(store)
		if err != nil {
			t.Fatal(err)
		}
		hs, _, _ := st.List()
		switch {
		case len(hs) == 0 && killed:
			interrupted++
		case len(hs) == 1 && hs[0].Count == uint64(want):
		default:
			t.Errorf("killed at %d bytes written: %d sessions visible (%+v), want none or the whole file", at, len(hs), hs)
		}
		st.Close()
		out, stderr, code := scrim(t, "", "import", "claude", file, "--store", store)
		if code != 0 {
			t.Fatalf("import after the kill: %s", stderr)
		}
		st, _ = session.Open(store)
		hs, _, _ = st.List()
		st.Close()
		if len(hs) != 1 || hs[0].Count != uint64(want) {
			t.Errorf("after importing again: %q, sessions %+v, want one of %d messages", out, hs, want)
		}
		if !killed {
			t.Logf("the import finished before %d bytes were written", at)
		}
	}
	if interrupted == 0 {
		t.Error("no kill landed during an import: the test proved nothing")
	}
}

// du is the disk space a folder's files use (Badger preallocates, so sizes
// would overstate what was written).
func du(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				if st, ok := fi.Sys().(*syscall.Stat_t); ok {
					n += st.Blocks * 512
				}
			}
		}
		return nil
	})
	return n
}
