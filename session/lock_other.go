//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package session

const lockName = "scrim.lock"

// dirLock is a no-op here: Badger's own directory lock still refuses a second
// process, and Open maps its error to ErrInUse.
type dirLock struct{}

func lockDir(string) (*dirLock, error) { return &dirLock{}, nil }

func (*dirLock) unlock() {}
