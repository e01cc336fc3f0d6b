//go:build !linux

package session

// releaseMapped is a no-op where the kernel's mapping list is not readable
// the Linux way.
func (s *Store) releaseMapped() {}
