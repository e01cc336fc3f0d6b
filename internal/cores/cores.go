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
// 11,500 (median 11 ms), and 12 of about 20,600 over eight rounds of ten
// runs on 2026-12-06 (median 10.6-11.4 ms). Runtime traces of the TUI put
// what is left of those in the collector: its stops (2-12 ms) and a key's
// goroutines parked to assist it, both crowded where a first count's
// gathering ends (20-28 collections a second at the memory limit). Kept
// spare all the time, the count took about a twentieth longer (the
// collector's idle workers take the spare processor), so it is kept only
// while keys come.
package cores

import (
	"runtime"
	"sync"
)

var (
	mu   sync.Mutex
	base int  // the processors the work is spread over, once Spare fixed it; 0 before
	want bool // a processor beyond base is asked for (the last Spare)
	// asked counts the Spares; applied is the count that GOMAXPROCS was
	// last set for.
	asked, applied uint64
	// kick wakes the goroutine that changes GOMAXPROCS (apply), started
	// by the first Spare; changed is signalled when it has.
	kick    chan struct{}
	changed = sync.NewCond(&mu)
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

// Free is how many goroutines of CPU-bound work to start now: N, less one
// while Spare keeps a processor, so that the work leaves a core, not only
// a processor the operating system shares with it, to the goroutines that
// answer the user. At least one.
func Free() int {
	mu.Lock()
	defer mu.Unlock()
	n := base
	if n == 0 {
		n = runtime.GOMAXPROCS(0)
	}
	if want && n > 1 {
		n--
	}
	return n
}

// Wait holds worker i of N (0-based) while Spare keeps a processor, for
// work whose goroutines were started before (Free): the last of several
// waits. It returns at once for any other worker, and when nothing is
// kept.
func Wait(i int) {
	mu.Lock()
	defer mu.Unlock()
	for want && base > 1 && i >= base-1 {
		changed.Wait()
	}
}

// Spare asks for a processor beyond N for the goroutines that answer the
// user (on), or gives it back (off). The operating system still shares the
// cores among the threads that run: the one that answers is asleep most of
// the time, and is let run first when it wakes.
//
// Spare returns at once; a goroutine of its own sets GOMAXPROCS. Setting
// it stops the world, and first waits for a collection that is running to
// finish: while a count allocates on every core that is most of the time,
// and the first key of a burst, whose Update had set it, waited for it
// (4-5 ms in two of nine traced runs of BenchmarkScrollInTmux, 35-48 ms
// in some earlier runs).
func Spare(on bool) {
	mu.Lock()
	defer mu.Unlock()
	if base == 0 {
		base = runtime.GOMAXPROCS(0)
	}
	if on == want && applied == asked {
		return // as asked already, and set: every key asks again
	}
	want = on
	asked++
	if kick == nil {
		kick = make(chan struct{}, 1)
		go apply()
	}
	select {
	case kick <- struct{}{}:
	default: // apply is due to look at want already
	}
}

// apply sets GOMAXPROCS to what Spare last asked for, each time it is
// kicked.
func apply() {
	for range kick {
		mu.Lock()
		n, upto := base, asked
		if want {
			n++
		}
		mu.Unlock()
		runtime.GOMAXPROCS(n) // outside mu: N must not wait for it
		mu.Lock()
		applied = upto
		changed.Broadcast()
		mu.Unlock()
	}
}

// Settle waits until GOMAXPROCS is what the last Spare asked for.
func Settle() {
	mu.Lock()
	defer mu.Unlock()
	for applied != asked {
		changed.Wait()
	}
}
