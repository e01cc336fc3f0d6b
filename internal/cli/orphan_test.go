//go:build linux

package cli

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// backgroundSleep is a command that writes its shell's pid and that of a
// grandchild it puts in the background, then waits: sleep is bash's child,
// which bash alone dying would leave running.
func backgroundSleep(pidfile string) string {
	return "sleep 300 & echo $$ $! > " + pidfile + "; wait"
}

// TestToolCommandDiesWithScrim kills a real `scrim tool bash` (SIGKILL)
// while its command runs: what the command started goes with it, its
// background grandchild included.
func TestToolCommandDiesWithScrim(t *testing.T) {
	t.Parallel()
	f := newToolFixture(t)
	pidfile := filepath.Join(t.TempDir(), "pid")
	cmd := scrimProcess(t, f.args("bash", "trusted/x", "--", backgroundSleep(pidfile))...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	pids := waitPidfile(t, pidfile, done, &stderr)
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
	for _, pid := range pids {
		waitGone(t, pid, "after scrim was killed")
	}
}

// TestToolTimeoutKillsTheGroup: a command that outlives its timeout is
// killed with everything it started, not just the shell scrim ran.
func TestToolTimeoutKillsTheGroup(t *testing.T) {
	t.Parallel()
	f := newToolFixture(t)
	pidfile := filepath.Join(t.TempDir(), "pid")
	// The shell waits in the foreground for longer than the timeout; the
	// background sleep would outlive it if only the shell were killed.
	line := "sleep 300 & echo $$ $! > " + pidfile + "; sleep 200"
	stdout, stderr, code := scrim(t, "", f.args("bash", "trusted/x", "--timeout", "2s", "--", line)...)
	if code != exitError || !strings.Contains(stdout, "[timed out after 2s: the command was killed]") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	b, err := os.ReadFile(pidfile)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("the machine is so busy that the timeout came before the command wrote its pids")
	} else if err != nil {
		t.Fatal(err)
	}
	for _, pid := range parsePids(t, string(b)) {
		waitGone(t, pid, "after the timeout")
	}
}

// waitPidfile waits for the command to write its pids, and makes sure
// that those processes do not outlive the test if it fails.
func waitPidfile(t *testing.T, pidfile string, done <-chan error, stderr *bytes.Buffer) []int {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		if b, _ := os.ReadFile(pidfile); strings.HasSuffix(string(b), "\n") {
			pids := parsePids(t, string(b))
			for _, pid := range pids {
				start := startTime(pid)
				t.Cleanup(func() {
					if start != "" && startTime(pid) == start {
						syscall.Kill(pid, syscall.SIGKILL)
					}
				})
			}
			return pids
		}
		select {
		case err := <-done:
			t.Fatalf("scrim ended before the command ran: %v (stderr %q)", err, stderr.String())
		case <-deadline:
			t.Fatal("the command did not start")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func parsePids(t *testing.T, s string) []int {
	t.Helper()
	var pids []int
	for _, f := range strings.Fields(s) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("the pidfile holds %q", s)
		}
		pids = append(pids, pid)
	}
	if len(pids) != 2 {
		t.Fatalf("the pidfile holds %q, want the shell's pid and its child's", s)
	}
	return pids
}

// waitGone waits for pid to be gone. A killed process nobody has reaped yet
// (a zombie) counts as gone: it runs nothing.
func waitGone(t *testing.T, pid int, when string) {
	t.Helper()
	start := startTime(pid)
	for range 500 { // 10s, far more than a kill takes; no claim on speed
		if s := startTime(pid); s == "" || s != start {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("process %d that the command started still runs %s", pid, when)
}

// startTime returns a running process's start time (field 22 of
// /proc/PID/stat), which tells it from a later process given the same pid,
// or "" if there is no such process or it has exited (a zombie).
func startTime(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	_, rest, ok := strings.Cut(string(b), ") ")
	fields := strings.Fields(rest)
	if !ok || len(fields) < 20 || fields[0] == "Z" || fields[0] == "X" {
		return ""
	}
	return fields[19]
}
