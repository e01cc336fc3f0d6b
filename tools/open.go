package tools

import (
	"os"

	"github.com/scrim-dev/scrim/policy"
)

// changedError says a file was swapped while a tool was opening it.
type changedError struct{ path string }

func (e changedError) Error() string {
	return e.path + " changed while it was being opened (a file or folder on its path was replaced); try again"
}

// openChecked opens path for reading. It never waits: a FIFO or device opens
// at once (and is then refused as not a regular file). When want is the
// canonical path the policy allowed, it checks that the file opened is the
// one at want: between the decision and the open, a hostile process can swap
// a file or a folder on the path for a symlink into a denied folder, and
// content must come from the path that was decided, or not at all.
func openChecked(path, want string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, describeOpenErr(path, err)
	}
	if want == "" {
		return f, nil
	}
	if got, ok := fdPath(f); ok {
		if got != want {
			f.Close()
			return nil, changedError{path}
		}
		return f, nil
	}
	// No /proc to ask: the file at want, resolved again now, must be the
	// one opened. A swap and a swap back inside this window is not caught.
	canon, cerr := policy.Canonical(want)
	fi, ferr := f.Stat()
	wi, werr := os.Lstat(want)
	if cerr != nil || canon != want || ferr != nil || werr != nil || !os.SameFile(fi, wi) {
		f.Close()
		return nil, changedError{path}
	}
	return f, nil
}
