// Package cores says how many goroutines of CPU-bound work a process runs
// at once, and lets an interactive process keep a processor for the
// goroutines that answer its user while the user is at the keys.
//
// With as many processors (GOMAXPROCS) as cores, and the TUI's first count
// of a million-message session on all of them, a key's way to the screen
// (the input reader back from its read, the event loop, the renderer) could
// wait at each step for the scheduler to preempt a counting goroutine, up
// to 10 ms a time. Measured in tmux (BenchmarkScrollInTmux: a key sent,
// the pane read until it shows the move), 35 of 523 steps took over 50 ms
// while it counted (median 30 ms); with a processor spare, 5 of about
// 11,500 (median 11 ms). Kept spare all the time, the count took about a
// twentieth longer (the collector's idle workers take the spare
// processor), so it is kept only while keys come.
package cores

import (
	"runtime"
	"sync"
)

var (
	mu    sync.Mutex
	base  int  // the processors the work is spread over, once Spare fixed it; 0 before
	spare bool // a processor beyond base is kept
)

// N is how many goroutines of CPU-bound work to run at once: GOMAXPROCS,
// less a processor Spare keeps.
func N() int {
	mu.Lock()
	defer mu.Unlock()
	if base > 0 {
		return base
	}
	return runtime.GOMAXPROCS(0)
}

// Spare keeps a processor beyond N for the goroutines that answer the user
// (on), or gives it back (off). The operating system still shares the
// cores among the threads that run: the one that answers is asleep most of
// the time, and is let run first when it wakes.
func Spare(on bool) {
	mu.Lock()
	defer mu.Unlock()
	if base == 0 {
		base = runtime.GOMAXPROCS(0)
	}
	if on == spare {
		return
	}
	spare = on
	if on {
		runtime.GOMAXPROCS(base + 1)
	} else {
		runtime.GOMAXPROCS(base)
	}
}
