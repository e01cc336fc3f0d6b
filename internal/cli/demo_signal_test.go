//go:build unix

package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A demo closed by SIGHUP (a closed terminal or tmux) or SIGTERM removes its
// folder; one killed outright leaves it to the next demo, which removes the
// folders whose owner is gone and keeps the rest.
func TestDemoCleansUpAfterSignals(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM} {
		tmp := t.TempDir()
		setenv(t, "TMPDIR", tmp)
		setenv(t, "COLUMNS", "120")
		setenv(t, "LINES", "30")
		cmd := scrimProcess(t, "demo")
		in, err := cmd.StdinPipe()
		must(t, err)
		defer in.Close()
		var out bytes.Buffer
		cmd.Stdout = &out
		must(t, cmd.Start())
		deadline := time.Now().Add(20 * time.Second)
		for {
			if dirs, _ := filepath.Glob(filepath.Join(tmp, "scrim-demo-*", "store")); len(dirs) == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%v: no demo folder", sig)
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond) // the TUI is up
		must(t, cmd.Process.Signal(sig))
		cmd.Wait()
		if left, _ := filepath.Glob(filepath.Join(tmp, "scrim-demo-*")); len(left) != 0 {
			t.Errorf("%v left %v", sig, left)
		}
	}

	// A TMPDIR whose name holds a pattern's characters is a name: its
	// stale demo goes, another folder's stays.
	for _, name := range []string{"t*", "t["} {
		parent := t.TempDir()
		tmp, other := filepath.Join(parent, name), filepath.Join(parent, "t-other")
		for _, d := range []string{tmp, other} {
			must(t, os.MkdirAll(filepath.Join(d, "scrim-demo-dead"), 0o700))
			must(t, os.WriteFile(filepath.Join(d, "scrim-demo-dead", demoOwner), []byte("999999999"), 0o600))
		}
		removeStaleDemos(tmp)
		if _, err := os.Stat(filepath.Join(tmp, "scrim-demo-dead")); err == nil {
			t.Errorf("TMPDIR %s: its stale demo is left", name)
		}
		if _, err := os.Stat(filepath.Join(other, "scrim-demo-dead")); err != nil {
			t.Errorf("TMPDIR %s: the demo of another folder is gone: %v", name, err)
		}
	}

	tmp := t.TempDir()
	dead := filepath.Join(tmp, "scrim-demo-dead")
	alive := filepath.Join(tmp, "scrim-demo-alive")
	kept := filepath.Join(tmp, "scrim-demo-kept")
	for _, d := range []string{dead, alive, kept} {
		must(t, os.MkdirAll(d, 0o700))
	}
	must(t, os.WriteFile(filepath.Join(dead, demoOwner), []byte("999999999"), 0o600))
	must(t, os.WriteFile(filepath.Join(alive, demoOwner), []byte(strconv.Itoa(os.Getpid())), 0o600))
	removeStaleDemos(tmp)
	left, _ := filepath.Glob(filepath.Join(tmp, "scrim-demo-*"))
	if got := strings.Join(left, " "); strings.Contains(got, "dead") || !strings.Contains(got, "alive") || !strings.Contains(got, "kept") {
		t.Fatalf("left %v; want alive and kept", left)
	}
}
