//go:build unix

package cli

import "golang.org/x/sys/unix"

// diskFree is the space an unprivileged user can still write on the disk
// that holds path.
func diskFree(path string) (uint64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true
}
