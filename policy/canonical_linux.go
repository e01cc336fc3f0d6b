package policy

import (
	"errors"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noProcFD is set once /proc/self/fd turns out to be unusable (no /proc mounted).
var noProcFD atomic.Bool

// kernelResolve asks the kernel to resolve an existing path in one open, then
// reads the result back from /proc/self/fd: three syscalls instead of one
// lstat per component. The kernel walks exactly as resolve does (physical
// "..", links followed), so for an existing path the answers agree; anything
// unusual (missing path, no /proc, a deleted or unreachable file) returns
// false and the caller walks instead.
func kernelResolve(abs string) (string, bool) {
	if noProcFD.Load() {
		return "", false
	}
	// O_PATH opens without reading: no permission on the file itself is
	// needed, FIFOs do not block and devices are not touched.
	fd, err := unix.Open(abs, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer unix.Close(fd)
	var buf [unix.PathMax + 1]byte
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
	if err != nil {
		// Only a missing /proc turns this off: a path the kernel cannot
		// write back (longer than a page) fails here too, and must not
		// send every later path, for the rest of the process, to the walk.
		if errors.Is(err, unix.ENOENT) {
			noProcFD.Store(true)
		}
		return "", false
	}
	if n >= unix.PathMax {
		return "", false
	}
	s := string(buf[:n])
	if !strings.HasPrefix(s, "/") || strings.HasSuffix(s, " (deleted)") {
		return "", false
	}
	return s, true
}
