package tools

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// errStop ends a walk early (a limit was reached); it is not a failure.
var errStop = errors.New("stop walking")

// walker visits the files under a folder the way a developer expects a code
// search to: sorted by name, never inside .git/, honouring .gitignore files
// (and .git/info/exclude) of the enclosing repository, following symlinks to
// files but not to folders (a folder link can loop).
type walker struct {
	ctx        context.Context
	unreadable int // folders that could not be listed
	// visit is called with the absolute path of each file and its path
	// relative to the walk's root, slash-separated.
	visit func(abs, rel string) error
}

// walk visits every file under root. A root that is a file is visited alone.
func (w *walker) walk(root string) error {
	fi, err := os.Stat(root)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return w.visit(root, filepath.Base(root))
	}
	repo, comps := repoOf(root)
	pats := ancestorPatterns(repo, comps)
	err = w.dir(root, "", comps, pats)
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

func (w *walker) dir(dir, rel string, comps []string, pats []gitignore.Pattern) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	pats = append(pats[:len(pats):len(pats)], readIgnore(filepath.Join(dir, ".gitignore"), comps)...)
	m := gitignore.NewMatcher(pats)
	entries, err := os.ReadDir(dir)
	if err != nil {
		w.unreadable++
		return nil
	}
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(dir, name)
		sub := append(comps[:len(comps):len(comps)], name)
		relPath := name
		if rel != "" {
			relPath = rel + "/" + name
		}
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			fi, err := os.Stat(path)
			if err != nil || fi.IsDir() || !fi.Mode().IsRegular() {
				continue // broken, a folder (could loop), or a device
			}
		} else if !isDir && !e.Type().IsRegular() {
			continue
		}
		if isDir && name == ".git" || m.Match(sub, isDir) {
			continue
		}
		if isDir {
			err = w.dir(path, relPath, sub, pats)
		} else {
			err = w.visit(path, relPath)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// repoOf finds the git repository that holds dir (the nearest folder upwards
// with a .git entry) and returns its root and dir's components below it. Out
// of a repository, dir itself is the root: its .gitignore files still apply.
func repoOf(dir string) (string, []string) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			rel, err := filepath.Rel(d, dir)
			if err != nil || rel == "." {
				return d, nil
			}
			return d, strings.Split(filepath.ToSlash(rel), "/")
		}
		if d == filepath.Dir(d) {
			return dir, nil
		}
	}
}

// ancestorPatterns loads the ignore rules that apply above the walk's root:
// the repository's info/exclude and each .gitignore from the repository root
// down to, not including, the root itself (the walk reads that one).
func ancestorPatterns(repo string, comps []string) []gitignore.Pattern {
	pats := readIgnore(filepath.Join(repo, ".git", "info", "exclude"), nil)
	for i := range comps {
		dir := filepath.Join(append([]string{repo}, comps[:i]...)...)
		pats = append(pats, readIgnore(filepath.Join(dir, ".gitignore"), comps[:i])...)
	}
	return pats
}

// readIgnore parses one ignore file; a missing or unreadable one has no rules.
func readIgnore(path string, domain []string) []gitignore.Pattern {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []gitignore.Pattern
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		out = append(out, gitignore.ParsePattern(line, domain))
	}
	return out
}
