//go:build !unix

package session

import (
	"testing"
	"time"
)

// Without getrusage the benchmarks report wall time only.
func cpuClock() time.Duration { return 0 }

func reportCPU(*testing.B, time.Duration) {}
