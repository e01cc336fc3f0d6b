//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

const lockName = "scrim.lock"

// dirLock is scrim's own advisory lock on the store, taken before Badger's so
// that "in use" is recognised by errno, not by Badger's message text.
type dirLock struct{ f *os.File }

func lockDir(dir string) (*dirLock, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock session store %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("session store %s is %w", dir, ErrInUse)
		}
		return nil, fmt.Errorf("lock session store %s: %w", dir, err)
	}
	return &dirLock{f}, nil
}

// unlock releases the lock; closing the file drops the flock.
func (l *dirLock) unlock() {
	if l != nil && l.f != nil {
		l.f.Close()
	}
}
