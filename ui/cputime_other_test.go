//go:build !linux

package ui

import "time"

func threadCPU() (ns int64, ok bool) { return 0, false }

func cpuTime() time.Duration { return 0 }
