package importers

import (
	"errors"
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
			if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
				err = pe.Err // the path once, not again as "stat PATH:"
			}
			return nil, fmt.Errorf("cannot read %s: %w", root, err)
		}
		if !fi.IsDir() {
			if !seen[root] {
				seen[root] = true
				out = append(out, root)
			}
			continue
		}
		// A root that is a link to a folder (~/.claude/projects moved to a
		// bigger disk and linked back): walk the folder, its files named
		// under the link, as the watcher names them. WalkDir does not
		// follow a root that is a link, and found nothing.
		walk := root
		if li, err := os.Lstat(root); err == nil && li.Mode()&fs.ModeSymlink != 0 {
			walk += string(filepath.Separator)
		}
		err = filepath.WalkDir(walk, func(path string, d fs.DirEntry, err error) error {
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
