// Package owned notes, in a temporary folder, the process that owns it, so
// that a later scrim removes a folder whose owner was killed (kill -9, a
// closed terminal) before it could remove the folder itself.
package owned

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Claim notes this process as the owner of dir, in dir's file name.
func Claim(dir, name string) error {
	return os.WriteFile(filepath.Join(dir, name), []byte(strconv.Itoa(os.Getpid())), 0o600)
}

// RemoveOrphans removes the folders in parent whose names start with
// prefix and whose owner (Claim, in their file name) is gone. A folder
// with no owner noted (kept on purpose, or made by another program) stays,
// and so does one whose owner cannot be told gone.
func RemoveOrphans(parent, prefix, name string) {
	if parent == "" {
		parent = os.TempDir()
	}
	// Read, not globbed: a folder's name is not a pattern ("[" would fail
	// it, "*" reach other folders').
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		d := filepath.Join(parent, e.Name())
		b, err := os.ReadFile(filepath.Join(d, name))
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 && !Alive(pid) {
			os.RemoveAll(d)
		}
	}
}
