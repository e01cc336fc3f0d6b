package session

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const crashSession = "crash"

// crashMessage is message seq of the crash test: its text says its Seq.
// Most are about 1.5 KB (value log); every third is short (kept in the LSM
// tree), so recovery of both is checked.
func crashMessage(seq uint64) *Message {
	lines := 64
	if seq%3 == 0 {
		lines = 4
	}
	m := &Message{Role: RoleTool, Tool: "read", Parts: []Part{{Kind: PartToolResult,
		Text: fmt.Sprintf("message %d\n%s", seq, strings.Repeat(fmt.Sprintf("line of message %d\n", seq), lines))}}}
	if seq%5 == 0 {
		path := fmt.Sprintf("/src/file%d.go", seq%17)
		m.Parts[0].SourcePath = path
		m.Meta.SourcePaths = []string{path}
	}
	return m
}

// TestCrashChild is the process TestCrashRecovery kills: it appends in a
// loop (single messages, small batches and bulk appends) and prints the last
// Seq each time an append returns.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv("SCRIM_CRASH_STORE")
	if dir == "" {
		t.Skip("helper process of TestCrashRecovery")
	}
	s, err := Open(dir)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	h, err := s.Get(crashSession)
	if err != nil {
		h, err = s.Create(Header{ID: crashSession, Title: "crash"})
	}
	if err != nil {
		fmt.Println("create:", err)
		os.Exit(1)
	}
	next := h.Count + 1
	deadline := time.Now().Add(2 * time.Minute) // never outlive a lost parent
	for i := 0; time.Now().Before(deadline); i++ {
		n := []int{1, 1, 3, 1, 200}[i%5]
		msgs := make([]*Message, n)
		for j := range msgs {
			msgs[j] = crashMessage(next + uint64(j))
		}
		if n > 100 {
			err = s.AppendBulk(crashSession, msgs)
		} else {
			err = s.Append(crashSession, msgs...)
		}
		if err != nil {
			fmt.Println("append:", err)
			os.Exit(1)
		}
		next += uint64(n)
		fmt.Println(next - 1) // unbuffered: the parent sees it at once
	}
	os.Exit(0)
}

// TestCrashRecovery kills a writer with SIGKILL mid-append, three times over
// the same store: every message whose append returned must come back, and
// the header's count must equal the messages present.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns writer processes")
	}
	dir := t.TempDir()
	for round, killAfter := range []uint64{300, 15000, 16000} {
		reported := runAndKill(t, dir, killAfter)
		if reported < killAfter {
			t.Fatalf("round %d: child reported only %d messages", round+1, reported)
		}
		s, err := Open(dir)
		if err != nil {
			t.Fatalf("round %d: reopen after SIGKILL: %v", round+1, err)
		}
		h, err := s.Get(crashSession)
		if err != nil {
			t.Fatal(err)
		}
		msgs, bad, err := s.Messages(crashSession)
		s.Close()
		if err != nil || len(bad) != 0 {
			t.Fatalf("round %d: %v %v", round+1, err, bad)
		}
		if h.Count < reported {
			t.Fatalf("round %d: header counts %d messages, but appends of %d returned", round+1, h.Count, reported)
		}
		if uint64(len(msgs)) != h.Count {
			t.Fatalf("round %d: header counts %d, %d messages present", round+1, h.Count, len(msgs))
		}
		for i := range msgs {
			want := crashMessage(uint64(i + 1))
			if msgs[i].Seq != uint64(i+1) || msgs[i].Text() != want.Text() || fmt.Sprint(msgs[i].Meta.SourcePaths) != fmt.Sprint(want.Meta.SourcePaths) {
				t.Fatalf("round %d: message at %d has seq %d and is not the one appended", round+1, i, msgs[i].Seq)
			}
		}
		t.Logf("round %d: killed after %d reported, %d recovered", round+1, reported, h.Count)
	}
}

// runAndKill starts TestCrashChild on dir, SIGKILLs it once it has reported
// more than killAfter messages in total, and returns the highest Seq it
// reported (including lines written just before the kill).
func runAndKill(t *testing.T, dir string, killAfter uint64) uint64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
	cmd.Env = append(os.Environ(), "SCRIM_CRASH_STORE="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var last uint64
	killed := false
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		seq, err := strconv.ParseUint(sc.Text(), 10, 64)
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child: %s", sc.Text())
		}
		last = seq
		if !killed && seq >= killAfter {
			// A varying delay lands the kill at different points of the
			// next append: before, inside, or after its commit.
			time.AfterFunc(time.Duration(rand.IntN(4000))*time.Microsecond, func() { cmd.Process.Signal(syscall.SIGKILL) })
			killed = true
		}
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child was not killed by SIGKILL: %v", err)
	}
	return last
}

// TestOpenAfterKillBetweenCreateAndTruncate: Badger creates a value log or
// memtable log file and then sizes it; a kill between the two leaves an
// empty file, which Badger refuses at the next open ("Create a new file").
// Nothing was ever written to it, so Open must get past it, with every stored
// message intact: for a brand-new store (killed as it was made) and at a
// rotation, for either kind of file.
func TestOpenAfterKillBetweenCreateAndTruncate(t *testing.T) {
	for _, tc := range []struct {
		ext   string
		fresh bool
	}{{"vlog", true}, {"vlog", false}, {"mem", true}, {"mem", false}} {
		t.Run(fmt.Sprintf("%s fresh=%v", tc.ext, tc.fresh), func(t *testing.T) {
			testOpenAfterEmptyLog(t, tc.ext, tc.fresh)
		})
	}
}

func testOpenAfterEmptyLog(t *testing.T, ext string, fresh bool) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want uint64
	if !fresh {
		if _, err := s.Create(Header{ID: crashSession, Title: "crash"}); err != nil {
			t.Fatal(err)
		}
		for seq := uint64(1); seq <= 10; seq++ {
			if err := s.Append(crashSession, crashMessage(seq)); err != nil {
				t.Fatal(err)
			}
		}
		want = 10
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*."+ext))
	if len(logs) == 0 && ext == "vlog" {
		t.Fatal("no value log file to work with")
	}
	var last int
	if len(logs) > 0 {
		fmt.Sscanf(filepath.Base(logs[len(logs)-1]), "%d", &last)
	}
	// The newest file, as the store was made, or the next one, at a
	// rotation; Badger numbers value logs with six digits, memtables five.
	name := map[string]string{"vlog": "%06d.vlog", "mem": "%05d.mem"}[ext]
	empty := filepath.Join(dir, fmt.Sprintf(name, max(last, 1)))
	if !fresh {
		empty = filepath.Join(dir, fmt.Sprintf(name, last+1))
	}
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !fresh {
		msgs, bad, err := s.Messages(crashSession)
		if err != nil || len(bad) > 0 || uint64(len(msgs)) != want {
			t.Fatalf("after reopening: %d messages (%v %v), want %d", len(msgs), err, bad, want)
		}
	}
	s.Close()
}
