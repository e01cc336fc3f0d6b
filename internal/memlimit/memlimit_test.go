package memlimit

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestSoftMemoryLimitFollowsLiveHeap: once the live heap outgrows the
// memory limit, the limit is raised after the next collection to
// leave room above it (a limit under the live set has the collector run
// without pause), and it stays within what the heap needs.
func TestSoftMemoryLimitFollowsLiveHeap(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT set: Soft leaves the limit to it")
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer func() { // Soft is for the rest of a process, but not of the tests
		mu.Lock()
		following = 0
		mu.Unlock()
	}()
	Soft()
	const live = Limit + 64<<20
	held := make([]byte, live) // no pointers, untouched: the heap counts it, the machine barely
	want := int64(live + Headroom)
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		got := debug.SetMemoryLimit(-1)
		if got >= want {
			if got > want+live/4 {
				t.Fatalf("limit %d MiB for a live heap of %d MiB: more room than an eighth or the headroom", got>>20, live>>20)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("limit %d MiB after collecting a live heap of %d MiB, want at least %d MiB", got>>20, live>>20, want>>20)
		}
		time.Sleep(10 * time.Millisecond)
	}
	runtime.KeepAlive(held)
}

// TestFollowPutsBackTheLimit: a command's own limit (an import's) is kept
// above the live heap while it runs, and once it stops, the limit is what
// it was before, and stays so, however many collections follow.
func TestFollowPutsBackTheLimit(t *testing.T) {
	const floor = 32 << 20
	before := debug.SetMemoryLimit(-1)
	stop := Follow(floor)
	if got := debug.SetMemoryLimit(-1); got != floor {
		t.Fatalf("limit %d MiB once followed, want the floor, %d MiB", got>>20, floor>>20)
	}
	const live = floor + 64<<20
	held := make([]byte, live)
	deadline := time.Now().Add(10 * time.Second)
	for debug.SetMemoryLimit(-1) < live+Headroom {
		if time.Now().After(deadline) {
			t.Fatalf("limit %d MiB after collecting a live heap of %d MiB", debug.SetMemoryLimit(-1)>>20, live>>20)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	runtime.KeepAlive(held)
	stop()
	for range 5 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		if got := debug.SetMemoryLimit(-1); got != before {
			t.Fatalf("limit %d after stop, want %d as before", got, before)
		}
	}
}
