package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxLinks bounds symlink resolution so that a loop is an error, not a hang.
const maxLinks = 255

// ErrLoop is returned by Canonical for a symlink loop or an over-long chain.
var ErrLoop = errors.New("too many levels of symbolic links")

// Canonical returns the absolute, cleaned path with every symlink resolved,
// walking components the way the kernel does (so "link/.." means the link
// target's parent, not the link's). For a path that does not exist, the longest
// existing prefix is resolved and the rest is appended cleaned. An error means
// the path cannot be decided; callers must treat it as denied.
func Canonical(path string) (string, error) {
	if path == "" {
		return "", errors.New("canonical: empty path")
	}
	if strings.IndexByte(path, 0) >= 0 {
		return "", errors.New("canonical: path contains a NUL byte")
	}
	if !filepath.IsAbs(path) {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("canonical %q: %w", path, err)
		}
		path = wd + string(filepath.Separator) + path
	}
	links := 0
	return resolve("/", path, &links)
}

// resolve walks rest component by component on top of base, an already
// resolved absolute path.
func resolve(base, rest string, links *int) (string, error) {
	cur := base
	for rest != "" {
		var comp string
		comp, rest, _ = strings.Cut(rest, "/")
		switch comp {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, comp)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscallENOTDIR) {
			// The rest does not exist: append it lexically.
			return filepath.Join(next, filepath.Clean("/"+rest)), nil
		}
		if err != nil {
			return "", fmt.Errorf("canonical %s: %w", next, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		*links++
		if *links > maxLinks {
			return "", fmt.Errorf("canonical %s: %w", next, ErrLoop)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("canonical %s: %w", next, err)
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		rest = target + "/" + rest
	}
	return cur, nil
}

// lexical is the "path as given": absolute and cleaned, no symlinks resolved.
func lexical(path string) (string, error) {
	if path == "" || strings.IndexByte(path, 0) >= 0 {
		return "", errors.New("invalid path")
	}
	return filepath.Abs(path)
}
