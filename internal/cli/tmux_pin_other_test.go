//go:build unix && !linux

package cli

// eachCPU is nil where a thread cannot be pinned: one watcher, unpinned.
func eachCPU() []int { return nil }

func pinTo(int) {}
