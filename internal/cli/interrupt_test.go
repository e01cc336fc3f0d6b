//go:build unix

package cli

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// Ctrl-C while scrim check reads its snapshot, or while --repair makes its
// fresh store, leaves neither beside the store, and the exit code says the
// check was interrupted.
func TestCheckInterrupted(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dir := filepath.Join(parent, "store")
	longStore(t, dir)

	for _, tc := range []struct {
		name, beside string // beside: the start of the name that appears when the signal goes
		args         []string
	}{
		{"check", ".store.scrim-check-", []string{"check", dir}},
		{"repair", "store.repaired-", []string{"check", "--repair", dir}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			interruptOnceMade(t, scrimProcess(t, tc.args...), parent, tc.beside)
			es, _ := os.ReadDir(parent)
			if len(es) != 1 {
				t.Fatalf("beside the store after Ctrl-C: %v", es)
			}
		})
	}
}

// longStore makes a store at dir with one session long enough to
// interrupt (20,000 messages, 28 MB), and returns its ID.
func longStore(t *testing.T, dir string) string {
	t.Helper()
	st, err := session.Open(dir)
	must(t, err)
	h, err := st.Create(session.Header{Title: "long enough to interrupt"})
	must(t, err)
	msgs := make([]*session.Message, 20000)
	for i := range msgs {
		msgs[i] = &session.Message{Role: session.RoleTool, Tool: "read", Parts: []session.Part{{Kind: session.PartToolResult,
			Text: strings.Repeat(fmt.Sprintf("line %d of a file the agent read\n", i), 40)}}}
	}
	must(t, st.AppendBulk(h.ID, msgs))
	must(t, st.Close())
	return h.ID
}

// Ctrl-C while scrim export -o FILE writes leaves no temporary file beside
// FILE (unredacted, it holds every file the agent read) and no FILE.
func TestExportInterrupted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := filepath.Join(t.TempDir(), "store")
	id := longStore(t, store)
	cmd := scrimProcess(t, "--store", store, "export", id, "--format", "md", "-o", filepath.Join(dir, "out.md"))
	interruptOnceMade(t, cmd, dir, ".out.md.tmp-")
	if es, _ := os.ReadDir(dir); len(es) != 0 {
		t.Fatalf("left after Ctrl-C: %v", es)
	}
}

// interruptOnceMade starts cmd, sends it SIGINT once dir holds an entry
// whose name starts with prefix (what it makes and must not leave), and
// fails unless it then exits 130.
func interruptOnceMade(t *testing.T, cmd *exec.Cmd, dir, prefix string) {
	t.Helper()
	must(t, cmd.Start())
	deadline := time.Now().Add(30 * time.Second)
	for !besideStore(dir, prefix) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no %s… in %s while it ran", prefix, dir)
		}
		time.Sleep(time.Millisecond)
	}
	must(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit code %d (%v), want 130 (interrupted, what it made removed)", code, err)
	}
}

// besideStore reports whether parent holds an entry whose name starts with
// prefix.
func besideStore(parent, prefix string) bool {
	es, _ := os.ReadDir(parent)
	for _, e := range es {
		if strings.HasPrefix(e.Name(), prefix) {
			return true
		}
	}
	return false
}

// Ctrl-C while scrim import reads a Crush database leaves no copy of the
// database (the agent's whole history) in the temporary folder.
func TestImportInterrupted(t *testing.T) {
	t.Parallel()
	tmp, ws := t.TempDir(), t.TempDir()
	db := filepath.Join(ws, ".crush", "crush.db")
	stmts := []importtest.Stmt{{SQL: crushSchema}, {SQL: "INSERT INTO sessions (id, title, updated_at, created_at) VALUES ('s1', 'long enough to interrupt', 1, 1)"}, {SQL: "BEGIN"}}
	body := strings.Repeat("a line of a file the agent read\n", 60)
	for i := range 20000 {
		stmts = append(stmts, importtest.Stmt{
			SQL:  "INSERT INTO messages (id, session_id, role, parts, model, provider, created_at, updated_at) VALUES (?, 's1', 'tool', ?, 'gpt-4.1', 'openai', ?, ?)",
			Args: []any{fmt.Sprint("m", i), crushParts(crushResult(fmt.Sprint("c", i), body)), 1751366400 + i, 1751366400 + i},
		})
	}
	importtest.SQLite(t, db, append(stmts, importtest.Stmt{SQL: "COMMIT"})...)

	cmd := scrimProcess(t, "--store", filepath.Join(t.TempDir(), "store"), "import", "crush", ws)
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	interruptOnceMade(t, cmd, tmp, "scrim-sqlite-")
	if es, _ := os.ReadDir(tmp); len(es) != 0 {
		t.Fatalf("left in TMPDIR after Ctrl-C: %v", es)
	}
}

// A second Ctrl-C ends a process whose cleanup hangs: the first must not
// leave the user without a way to stop it but kill -9.
func TestInterruptTwiceWhileCleanupHangs(t *testing.T) {
	if os.Getenv("SCRIM_TEST_HANGING_CLEANUP") == "1" {
		defer onInterrupt(func() {
			fmt.Println("cleaning")
			select {} // hangs
		})()
		fmt.Println("ready")
		time.Sleep(time.Minute)
		return
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestInterruptTwiceWhileCleanupHangs$")
	cmd.Env = append(os.Environ(), "SCRIM_TEST_HANGING_CLEANUP=1")
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(out)
	next := func(want string) {
		t.Helper()
		if !lines.Scan() || lines.Text() != want {
			t.Fatalf("the child said %q (%v), want %q", lines.Text(), lines.Err(), want)
		}
	}
	next("ready")
	must(t, cmd.Process.Signal(syscall.SIGINT))
	next("cleaning")
	must(t, cmd.Process.Signal(syscall.SIGINT))
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
		if code := cmd.ProcessState.ExitCode(); code != 130 {
			t.Fatalf("exit code %d, want 130", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a second Ctrl-C did not end the process while its cleanup hung")
	}
}
