package cores

import (
	"runtime"
	"testing"
	"time"
)

func TestSpareKeepsOneProcessorOverTheWork(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	if N() != before {
		t.Fatalf("N before Spare: %d, want GOMAXPROCS %d", N(), before)
	}
	t.Cleanup(unspare)
	Spare(true)
	Spare(true) // kept once
	Settle()
	if got := runtime.GOMAXPROCS(0); got != before+1 {
		t.Fatalf("GOMAXPROCS with a processor spare: %d, want %d", got, before+1)
	}
	if N() != before {
		t.Fatalf("N with a processor spare: %d, want %d (the work keeps to the cores it had)", N(), before)
	}
	Spare(false)
	Settle()
	if got := runtime.GOMAXPROCS(0); got != before || N() != before {
		t.Fatalf("given back: GOMAXPROCS %d, N %d, want %d", got, N(), before)
	}
	// Asked for and given back before it was set: it ends given back.
	for range 100 {
		Spare(true)
		Spare(false)
	}
	Settle()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Fatalf("after a burst that ended giving it back: GOMAXPROCS %d, want %d", got, before)
	}
}

// TestWorkLeavesACoreWhileSpare: while a processor is kept for the user,
// work started then takes one core fewer (Free), and the last of the
// workers started before waits (Wait) until it is given back.
func TestWorkLeavesACoreWhileSpare(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one core: no core to leave")
	}
	n := runtime.GOMAXPROCS(0)
	t.Cleanup(unspare)
	if Free() != n {
		t.Fatalf("Free before Spare: %d, want %d", Free(), n)
	}
	Wait(n - 1) // nothing kept: returns
	Spare(true)
	Settle()
	if Free() != n-1 {
		t.Fatalf("Free while a processor is kept: %d, want %d", Free(), n-1)
	}
	Wait(n - 2) // not the last: returns
	waited := make(chan struct{})
	go func() {
		Wait(n - 1)
		close(waited)
	}()
	select {
	case <-waited:
		t.Fatal("the last worker went on while a processor was kept")
	case <-time.After(50 * time.Millisecond):
	}
	Spare(false)
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("the last worker still waits after the processor was given back")
	}
	if Free() != n {
		t.Fatalf("Free after: %d, want %d", Free(), n)
	}
}

// unspare gives a kept processor back and forgets the cores Spare fixed,
// as before a test.
func unspare() {
	Spare(false)
	Settle()
	mu.Lock()
	base = 0
	mu.Unlock()
}
