package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
	if d, ok := DrivePath(path); ok {
		return d, nil
	}
	abs, err := absolute(path)
	if err != nil {
		return "", err
	}
	return canonicalAbs(abs)
}

// canonicalAbs resolves an absolute, uncleaned path: by the kernel when it
// can, else by walking it.
func canonicalAbs(abs string) (string, error) {
	if d, ok := DrivePath(abs); ok {
		return d, nil // another machine's path: nothing here to resolve
	}
	if s, ok := kernelResolve(abs); ok {
		return s, nil
	}
	links := 0
	return resolve(abs, &links)
}

// absolute makes path absolute without cleaning it: cleaning first would turn
// "link/../x" into "x" and lose the physical meaning of "..".
func absolute(path string) (string, error) {
	if path == "" {
		return "", errors.New("empty path")
	}
	if strings.IndexByte(path, 0) >= 0 {
		return "", errors.New("path contains a NUL byte")
	}
	if filepath.IsAbs(path) {
		return path, nil
	}
	if d, ok := DrivePath(path); ok {
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("cannot resolve relative path %q: %w", path, err)
	}
	return wd + string(filepath.Separator) + path, nil
}

// resolve walks the absolute path component by component from the root.
// cur is always a resolved path; rest is what is left to walk.
func resolve(path string, links *int) (string, error) {
	cur, rest := "/", path
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
		// ENOTDIR: a file used as a folder; what follows cannot exist either.
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			if !hasDotDot(rest) {
				return filepath.Join(next, rest), nil
			}
			// "missing/../link/x": a later ".." climbs back into folders
			// that exist, whose symlinks must still be resolved. Treat the
			// missing component as a plain folder and keep walking.
			cur = next
			continue
		}
		if err != nil {
			return "", fmt.Errorf("cannot resolve %s: %w", next, unwrapPath(err))
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		*links++
		if *links > maxLinks {
			return "", fmt.Errorf("cannot resolve %s: %w", path, ErrLoop)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("cannot resolve %s: %w", next, unwrapPath(err))
		}
		if err := procTarget(next, target); err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		// A relative target is relative to the link's folder, which is cur.
		rest = target + "/" + rest
	}
	return cur, nil
}

// procTarget refuses what a /proc link (fd/N, cwd, root, exe, map_files)
// leads to when it is no path: a file deleted while a process holds it
// open reads "…/.env (deleted)", which no deny pattern matches, and pipes,
// sockets and namespaces read "pipe:[123]", "anon_inode:[eventfd]".
// Neither can be decided, so both are denied, for every tier. /proc's
// plain links are paths, some relative: self reads "1234", thread-self
// "1234/task/1235", mounts "self/mounts"; those are followed.
func procTarget(link, target string) error {
	if !strings.HasPrefix(link, "/proc/") {
		return nil
	}
	first, _, _ := strings.Cut(target, "/")
	switch {
	case strings.HasSuffix(target, " (deleted)"):
		return fmt.Errorf("cannot resolve %s: it leads to a deleted file (%s)", link, target)
	case target == "" || strings.Contains(first, ":"):
		return fmt.Errorf("cannot resolve %s: it leads to %s, not a file", link, target)
	}
	return nil
}

func hasDotDot(rest string) bool {
	for rest != "" {
		var comp string
		comp, rest, _ = strings.Cut(rest, "/")
		if comp == ".." {
			return true
		}
	}
	return false
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Forms returns the canonical forms of abs, an absolute path as a program
// named it (not cleaned). The first is the kernel's: ".." after a symlink
// climbs from the link's target. When abs has a ".." whose meaning depends
// on that, the second is the form of abs cleaned by name first, as a program
// that cleans paths before it opens them (Node's path.resolve, Python's
// normpath) reads it. Who read the file is not always known, so both are
// returned; a caller that cannot resolve a form falls back to the path as
// named, cleaned: content read from it is still that file's.
func Forms(abs string) []string {
	phys, err := Canonical(abs)
	if err != nil {
		phys = filepath.Clean(abs)
	}
	if !hasDotDot(abs) {
		return []string{phys}
	}
	lex, err := Canonical(filepath.Clean(abs))
	if err != nil {
		lex = filepath.Clean(abs)
	}
	if lex == phys {
		return []string{phys}
	}
	return []string{phys, lex}
}
