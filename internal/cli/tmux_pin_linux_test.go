package cli

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// eachCPU is the processors this process may run on.
func eachCPU() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var cpus []int
	for c := range 1024 {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// pinTo keeps the calling goroutine on one processor, cpu, for as long as
// it runs (its thread is not used again once it returns).
func pinTo(cpu int) {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	_ = unix.SchedSetaffinity(0, &set) // unpinned, it still watches a processor
}
