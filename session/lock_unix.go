//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
		holder := make([]byte, 32)
		n, _ := f.ReadAt(holder, 0)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, inUse(dir, strings.TrimSpace(string(holder[:n])))
		}
		return nil, fmt.Errorf("lock session store %s: %w", dir, err)
	}
	// The holder's PID, for the message a second process prints.
	if f.Truncate(0) == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{f}, nil
}

// unlock releases the lock; closing the file drops the flock.
func (l *dirLock) unlock() {
	if l != nil && l.f != nil {
		l.f.Close()
	}
}
