// Package memlimit keeps the heap of a process that counts a big session
// close to what is live: the TUI, and scrim sessions --model, whose first
// count of a session gathers the fingerprints of all it withholds; and the
// heap of an import close to a limit made for it, but never under what is
// live.
package memlimit

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Limit bounds the heap a process that counts a big session lets grow
// before collecting: counting makes garbage fast, and by default the heap
// may double the live set (mostly the store's caches) before the collector
// runs.
const Limit = 160 << 20

// Soft sets Limit unless the user set GOMEMLIMIT, and keeps it above the
// live heap: a session whose fingerprints alone outgrow it (a million
// messages, half of the reads withheld: 1.2M fingerprints) would otherwise
// have the collector run without pause, since a limit under the live set
// makes every allocation a reason to collect (measured: the first count of
// that session 81 s, most of it marking). After every collection the limit
// is raised, when that is more, to what the runtime holds beside the heap,
// plus the live heap, plus an eighth of it or Headroom, whichever is more.
// (Before, it was a quarter again the live heap, raised once a second: a
// gathering grows its live heap by some 20 MB a second, so most of the
// quarter was room it had already taken. The TUI on the UI benchmark's
// session, first start, fresh store copy per run, interleaved: peak
// RssAnon 171-173 MiB against 177-187, the count's CPU 28-35 s against
// 29-31.) It stays set for the rest of the process.
func Soft() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	follow(Limit)
}

// Follow sets the memory limit to floor and keeps it above the live heap
// as Soft does, until stop, which puts back the limit and what was
// followed before. It is for a command that picks its own limit (an
// import), and leaves a limit the user set alone as the caller decides.
func Follow(floor int64) (stop func()) {
	mu.Lock()
	defer mu.Unlock()
	before, was := debug.SetMemoryLimit(-1), following
	followLocked(floor)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		following = was
		debug.SetMemoryLimit(before)
	}
}

// Headroom is the least room the limit leaves above the live heap: an
// eighth of a small one is collected too often.
const Headroom = 24 << 20

var (
	mu        sync.Mutex
	following int64 // the floor the limit follows the live heap from; 0: none
	armed     bool  // a cleanup will run after the next collection
)

// follow sets the limit to floor and has it follow the live heap from
// there.
func follow(floor int64) {
	mu.Lock()
	defer mu.Unlock()
	followLocked(floor)
}

// followLocked is follow with mu held.
func followLocked(floor int64) {
	following = floor
	debug.SetMemoryLimit(floor)
	if !armed {
		armed = true
		arm()
	}
}

var samples = [...]metrics.Sample{
	{Name: "/gc/heap/live:bytes"},
	{Name: "/memory/classes/total:bytes"}, // what the limit counts, less released
	{Name: "/memory/classes/heap/released:bytes"},
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/heap/free:bytes"},
	{Name: "/memory/classes/heap/unused:bytes"},
}

// arm has the limit set after the next collection: a cleanup of an object
// nothing holds runs once the collector has found it unreachable, and arms
// the next, for as long as a floor is followed. mu must be held.
func arm() {
	runtime.AddCleanup(new([32]byte), func(struct{}) {
		mu.Lock()
		defer mu.Unlock()
		if following == 0 {
			armed = false
			return
		}
		metrics.Read(samples[:])
		var v [len(samples)]int64
		for i, m := range samples {
			if m.Value.Kind() != metrics.KindUint64 {
				armed = false
				return // not this runtime's metrics: the limit stays as it is
			}
			v[i] = int64(m.Value.Uint64())
		}
		live, beside := v[0], v[1]-v[2]-v[3]-v[4]-v[5] // stacks, the runtime's own
		debug.SetMemoryLimit(max(following, beside+live+max(live/8, Headroom)))
		arm()
	}, struct{}{})
}
