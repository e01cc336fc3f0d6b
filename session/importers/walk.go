package importers

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// Files lists the transcripts under paths: a file is taken as named; a
// folder is searched recursively for files whose path match accepts. The
// result is sorted and free of duplicates.
func Files(paths []string, match func(name string) bool) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, root := range paths {
		fi, err := os.Stat(root)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", root, err)
		}
		if !fi.IsDir() {
			if !seen[root] {
				seen[root] = true
				out = append(out, root)
			}
			continue
		}
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // an unreadable folder: skip it, keep the rest
			}
			if d.IsDir() || !match(path) || seen[path] {
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 {
				if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
					return nil
				}
			}
			seen[path] = true
			out = append(out, path)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}
