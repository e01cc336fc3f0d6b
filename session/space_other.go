//go:build !unix

package session

func diskFree(string) (uint64, bool) { return 0, false }
