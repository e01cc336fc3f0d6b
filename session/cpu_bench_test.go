//go:build unix

package session

import (
	"syscall"
	"testing"
	"time"
)

// cpuClock reports the CPU time this process has used (all threads, Badger's
// compactors included). On a shared machine wall time measures the
// neighbours too; CPU time per operation is what the code costs.
func cpuClock() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds a cpu-ms/op metric for the loop that started at start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuClock()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}
