package tools

import (
	"os"
	"strconv"
	"strings"
)

// fdPath is the path the kernel has for an open file, read back from
// /proc/self/fd: the same source policy.Canonical uses, so for an unchanged
// file the two agree byte for byte. false when /proc cannot say.
func fdPath(f *os.File) (string, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return "", false
	}
	var s string
	cerr := rc.Control(func(fd uintptr) {
		s, err = os.Readlink("/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10))
	})
	if cerr != nil || err != nil || !strings.HasPrefix(s, "/") {
		return "", false
	}
	return s, true
}
