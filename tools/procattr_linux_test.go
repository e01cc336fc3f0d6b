//go:build linux

package tools

import (
	"runtime"
	"sync"
	"testing"
)

// TestBashSurvivesEndingThreads: a goroutine that returns while locked to
// its thread ends the thread, and Pdeathsig fires when the thread that
// started the command ends, not scrim. Threads end all around while bash
// runs commands here: none of them may be killed, as they were before
// runInGroup kept its thread until the command was over.
func TestBashSurvivesEndingThreads(t *testing.T) {
	env := envFor(t, "trusted/m", t.TempDir())
	stop := make(chan struct{})
	var ending sync.WaitGroup
	// Two goroutines: with four, the thread churn starved the commands'
	// own I/O past their WaitDelay while the whole suite ran on two
	// cores; two still end the command's thread every time the fix is
	// taken out (5 of 5 runs).
	for range 2 {
		ending.Go(func() { endThreads(stop) })
	}
	defer func() { close(stop); ending.Wait() }()
	for range 12 {
		m := runTool(t, "bash", env, map[string]any{"command": "sleep 0.1; echo ok"}).Message
		if got := m.Text(); got != "ok\n[exit code 0]" {
			t.Fatalf("the command was killed while scrim ran: %q", got)
		}
	}
}

// endThreads ends one thread after the other until stop is closed.
func endThreads(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread() // and return locked: the thread ends
			close(done)
		}()
		<-done
	}
}
