package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/scrim-dev/scrim/session"
)

// checkStoreDisk refuses a store on a disk that is (nearly) full: one
// with less free than opening it needs (session.FreeToOpen).
func checkStoreDisk(dir string) error {
	free, ok := diskFree(existingAncestor(dir))
	need := session.FreeToOpen(dir)
	if !ok || free >= need {
		return nil
	}
	return fmt.Errorf("the disk holding session store %s is full (%s free, scrim needs %d MiB to write safely): free some space, or pass --store DIR on another disk", dir, humanBytes(free), need>>20)
}

func existingAncestor(dir string) string {
	dir, _ = filepath.Abs(dir)
	for {
		if _, err := os.Stat(dir); err == nil || dir == filepath.Dir(dir) {
			return dir
		}
		dir = filepath.Dir(dir)
	}
}

func humanBytes(n uint64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// describeStoreErr says what to do about a store that cannot be opened for
// reasons of the disk, whatever words Badger used (the session store puts
// the errno back where Badger flattened it to text).
func describeStoreErr(dir string, err error) error {
	has := func(errno syscall.Errno) bool { return errors.Is(err, errno) }
	switch {
	case errors.Is(err, session.ErrInUse):
		return err // DESIGN.md fixes this message word for word
	case has(syscall.ENOSPC):
		return fmt.Errorf("the disk holding session store %s is full: free some space and try again, or pass --store DIR on another disk", dir)
	case has(syscall.EROFS):
		return fmt.Errorf("session store %s is on a read-only file system: scrim writes to its store even to read it; copy it somewhere writable and pass --store DIR", dir)
	case has(syscall.ENOTDIR):
		return fmt.Errorf("session store %s is a file, not a folder (or lies below one): pass --store DIR with a folder", dir)
	case has(syscall.EACCES), has(syscall.EPERM):
		return fmt.Errorf("session store %s cannot be written (permission denied): fix its permissions, or pass --store DIR you own", dir)
	}
	return err
}
