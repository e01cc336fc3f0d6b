package session

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// releaseMapped unmaps from this process the pages of the store's
// memory-mapped files (value log, tables, memtable logs), which Badger
// writes through shared mappings. Their contents stay in the kernel's page
// cache and on disk, and Badger's next access maps them again; for a shared
// file mapping MADV_DONTNEED loses nothing, dirty pages included. Without
// this, every byte an import writes stays resident in scrim until the store
// is closed, so importing a 60 MB transcript would hold 60 MB more.
func (s *Store) releaseMapped() {
	dir, err := filepath.Abs(s.dir)
	if err != nil {
		return
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "start-end perms offset dev inode path"
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || !strings.HasPrefix(fields[5], dir+string(filepath.Separator)) || fields[3] == "00:00" {
			continue
		}
		if !strings.Contains(fields[1], "s") { // only shared mappings keep their data
			continue
		}
		start, end, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		lo, err1 := strconv.ParseUint(start, 16, 64)
		hi, err2 := strconv.ParseUint(end, 16, 64)
		if err1 != nil || err2 != nil || hi <= lo {
			continue
		}
		syscall.Syscall(syscall.SYS_MADVISE, uintptr(lo), uintptr(hi-lo), syscall.MADV_DONTNEED)
	}
}
