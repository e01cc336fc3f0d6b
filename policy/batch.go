package policy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// Batch decides many paths for one tier in one pass (a redaction of a whole
// history), resolving each folder once: the canonical form of /a/b/name is
// canonical(/a/b)/name unless name is itself a symlink. Answers are the same
// as Decide's, given that folders do not change during the pass. Safe for
// concurrent use.
type Batch struct {
	p      *Policy
	t      *Tier
	mu     sync.RWMutex
	dirs   map[string]*folder
	expect map[string]int // names to come per folder, from Expect
}

// folder is what a batch knows of one folder: where it resolves to and,
// once enough of its names have been asked about, which of them are plain.
type folder struct {
	path  string
	err   error
	asked atomic.Int32 // starts at listFrom-1 when Expect says many will be
	list  sync.Once
	plain map[string]struct{} // names the listing showed are not symlinks
}

// listFrom is how many names asked in one folder make listing the folder
// cheaper than an lstat per name; listBudget bounds how much of a folder a
// listing reads, so that a huge folder costs no more than a few lstats.
const (
	listFrom   = 8
	listBudget = 1024
)

// NewBatch starts a pass of decisions for tier t.
func (p *Policy) NewBatch(t *Tier) *Batch {
	return &Batch{p: p, t: t, dirs: map[string]*folder{}}
}

// Expect tells the batch which paths it is about to be asked about, before
// any is, so that a folder with listFrom of them or more is listed at the
// first rather than after an lstat each for the others. It is a hint: the
// answers are the same without it.
func (b *Batch) Expect(paths []string) {
	expect := map[string]int{}
	for _, p := range paths {
		if _, dir, _, ok := batchSplit(p); ok {
			expect[dir]++
		}
	}
	b.mu.Lock()
	b.expect = expect
	b.mu.Unlock()
}

// Decide is Policy.Decide with folder resolutions shared across the batch.
func (b *Batch) Decide(path string) Decision {
	lex, dir, name, ok := batchSplit(path)
	if b.t == nil || !ok {
		// Relative, empty, odd, or with ".." that must be resolved
		// physically: leave it to the full walk.
		return b.p.Decide(b.t, path)
	}
	b.p.decisions.Add(1)
	f := b.folder(dir)
	if f.err != nil {
		return decideForms(b.t, lex, "", f.err)
	}
	canon := f.path + "/" + name // both clean: Join would only check that
	if f.path == "/" {
		canon = "/" + name
	}
	if f.isPlain(name) {
		return decideForms(b.t, lex, canon, nil)
	}
	fi, err := os.Lstat(canon)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink == 0,
		errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return decideForms(b.t, lex, canon, nil)
	}
	// A symlink (or an odd error) as the last component: resolve it fully.
	canon, err = canonicalAbs(lex)
	return decideForms(b.t, lex, canon, err)
}

// batchSplit splits a path that Decide resolves folder by folder into its
// cleaned form, folder and name.
func batchSplit(path string) (lex, dir, name string, ok bool) {
	if path == "" || !filepath.IsAbs(path) || strings.IndexByte(path, 0) >= 0 {
		return "", "", "", false
	}
	if filepath.Separator == '/' && isClean(path) {
		// Stored paths are canonical, so almost always clean: checking is
		// cheaper than cleaning, and the folder of a clean path is clean.
		if path == "/" {
			return "", "", "", false
		}
		i := strings.LastIndexByte(path, '/')
		dir = path[:i]
		if dir == "" {
			dir = "/"
		}
		return path, dir, path[i+1:], true
	}
	lex = filepath.Clean(path)
	if lex != path && hasDotDot(path) || lex == "/" {
		return "", "", "", false
	}
	dir, name = filepath.Split(lex)
	return lex, filepath.Clean(dir), name, true
}

func (b *Batch) folder(dir string) *folder {
	b.mu.RLock()
	f, ok := b.dirs[dir]
	many := b.expect[dir] >= listFrom
	b.mu.RUnlock()
	if ok {
		return f
	}
	f = &folder{}
	if many {
		f.asked.Store(listFrom - 1)
	}
	f.path, f.err = canonicalAbs(dir)
	b.mu.Lock()
	if prev, ok := b.dirs[dir]; ok {
		f = prev // resolved by another goroutine meanwhile
	} else {
		b.dirs[dir] = f
	}
	b.mu.Unlock()
	return f
}

// isPlain reports whether name is known to be a plain file or folder, not a
// symlink. From the listFrom-th name asked, the folder is listed once; a
// name the listing does not show (not reached, missing, spelled in another
// case, of unknown type) is not known, and is checked on its own.
func (f *folder) isPlain(name string) bool {
	if f.asked.Add(1) < listFrom {
		return false
	}
	f.list.Do(func() { f.plain = listPlain(f.path, listBudget) })
	_, ok := f.plain[name]
	return ok
}

// listPlain reads up to budget entries of folder dir and returns the names
// of those that are regular files or folders.
func listPlain(dir string, budget int) map[string]struct{} {
	file, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer file.Close()
	names := map[string]struct{}{}
	for budget > 0 {
		entries, err := file.ReadDir(min(budget, 256))
		for _, e := range entries {
			if t := e.Type(); t.IsRegular() || t.IsDir() {
				names[e.Name()] = struct{}{}
			}
		}
		budget -= len(entries)
		if err != nil {
			break
		}
	}
	return names
}

// isClean reports whether filepath.Clean would leave path, absolute on a
// system whose separator is '/', as it is: "/" itself, or no empty, "." or
// ".." component and no trailing slash.
func isClean(path string) bool {
	if path == "/" {
		return true
	}
	start := 1 // the first component starts after the leading slash
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		switch path[start:i] {
		case "", ".", "..":
			return false
		}
		start = i + 1
	}
	return true
}
