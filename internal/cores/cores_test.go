package cores

import (
	"runtime"
	"testing"
)

func TestSpareKeepsOneProcessorOverTheWork(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	if N() != before {
		t.Fatalf("N before Spare: %d, want GOMAXPROCS %d", N(), before)
	}
	t.Cleanup(func() {
		Spare(false)
		Settle()
		mu.Lock()
		base = 0
		mu.Unlock()
	})
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
