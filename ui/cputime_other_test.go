//go:build !linux

package ui

func threadCPU() (ns int64, ok bool) { return 0, false }
