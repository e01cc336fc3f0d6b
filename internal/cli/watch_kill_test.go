//go:build unix

package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// TestWatchKilledMidImport kills the real scrim TUI (SIGKILL) while its
// watcher imports a large transcript that appeared in a watched folder:
// reopened, the store holds what `scrim import` would (none of the file or
// all of it); the next scrim imports it whole, and `scrim import` after it
// finds nothing left to do.
func TestWatchKilledMidImport(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir := t.TempDir()
	projects := filepath.Join(dir, "projects")
	must(t, os.MkdirAll(filepath.Join(projects, "-home-dev-big"), 0o755))
	big := filepath.Join(dir, "big.jsonl")
	f, err := os.Create(big)
	must(t, err)
	want, err := importtest.WriteClaudeTranscript(f, 40<<20)
	f.Close()
	must(t, err)
	store := filepath.Join(dir, "store")

	cmd := scrimProcess(t, "--store", store, "--watch", "claude:"+projects)
	stdin, err := cmd.StdinPipe() // kept open: the TUI waits for keys
	must(t, err)
	defer stdin.Close()
	must(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	// The store is open once Badger's manifest is there; the file then
	// appears in the watched folder whole, as a rename.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(store, "MANIFEST")); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("scrim ended before opening the store: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("scrim did not open the store")
		}
	}
	base := du(store)
	file := filepath.Join(projects, "-home-dev-big", "big.jsonl")
	must(t, os.Rename(big, file))
	killed := false
poll:
	for {
		select {
		case err := <-done:
			t.Fatalf("scrim ended on its own: %v", err)
		case <-time.After(5 * time.Millisecond):
			if du(store) >= base+(2<<20) {
				cmd.Process.Signal(syscall.SIGKILL)
				<-done
				killed = true
				break poll
			}
			if time.Now().After(deadline) {
				break poll
			}
		}
	}
	if !killed {
		t.Fatal("the import never wrote 2 MiB: nothing to kill")
	}
	st, err := session.Open(store)
	must(t, err)
	hs, _, err := st.List()
	must(t, err)
	st.Close()
	interrupted := len(hs) == 0
	if !interrupted && (len(hs) != 1 || hs[0].Count != uint64(want)) {
		t.Fatalf("killed mid-import: sessions %+v, want none or one of %d messages", hs, want)
	}
	// The next scrim imports it whole at start; `scrim import` then finds
	// it unchanged.
	reopened, keys, frames := startTUI(t, "--store", store, "--watch", "claude:"+projects)
	summary := fmt.Sprintf("imported %d messages into 1 session", want)
	if !interrupted {
		summary = "Step 0: look at" // nothing to import: the list shows the session
	}
	waitFor(t, "the reopened scrim to import the file", func() bool { return strings.Contains(frames.String(), summary) })
	keys.Write([]byte("q"))
	must(t, reopened.Wait())
	out, stderr, code := scrim(t, "", "import", "claude", file, "--store", store)
	if code != 0 {
		t.Fatalf("import after the kill: exit %d: %s", code, stderr)
	}
	st, err = session.Open(store)
	must(t, err)
	hs, _, _ = st.List()
	var bad []session.DecodeError
	if len(hs) == 1 {
		_, bad, err = st.Messages(hs[0].ID)
		must(t, err)
	}
	st.Close()
	if !strings.Contains(out, "unchanged since the last import") {
		t.Errorf("scrim import after the reopened scrim: %q, want unchanged", out)
	}
	if len(hs) != 1 || hs[0].Count != uint64(want) || len(bad) > 0 {
		t.Fatalf("after `scrim import`: %q, sessions %+v (%d undecodable), want one of %d messages", out, hs, len(bad), want)
	}
	if !interrupted {
		t.Logf("the kill landed after the import committed")
	}
}
