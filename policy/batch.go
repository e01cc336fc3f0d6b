package policy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Batch decides many paths for one tier in one pass (a redaction of a whole
// history), resolving each folder once: the canonical form of /a/b/name is
// canonical(/a/b)/name unless name is itself a symlink. Answers are the same
// as Decide's, given that folders do not change during the pass. Safe for
// concurrent use.
type Batch struct {
	p    *Policy
	t    *Tier
	mu   sync.RWMutex
	dirs map[string]resolved
	// plain holds, per canonical folder, the names a listing showed are
	// not symlinks (set by Prefetch, read-only afterwards).
	plain map[string]map[string]struct{}
}

type resolved struct {
	path string
	err  error
}

// NewBatch starts a pass of decisions for tier t.
func (p *Policy) NewBatch(t *Tier) *Batch {
	return &Batch{p: p, t: t, dirs: map[string]resolved{}}
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
	cdir := b.dir(dir)
	if cdir.err != nil {
		return decideForms(b.t, lex, "", cdir.err)
	}
	canon := filepath.Join(cdir.path, name)
	if _, ok := b.plain[cdir.path][name]; ok {
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

func (b *Batch) dir(dir string) resolved {
	b.mu.RLock()
	r, ok := b.dirs[dir]
	b.mu.RUnlock()
	if ok {
		return r
	}
	r.path, r.err = canonicalAbs(dir)
	b.mu.Lock()
	b.dirs[dir] = r
	b.mu.Unlock()
	return r
}

// listFrom is how many paths in one folder make listing the folder cheaper
// than an lstat per path.
const listFrom = 8

// Prefetch prepares a batch for deciding paths: each folder holding at least
// listFrom of them is listed once, and the names it shows as regular files or
// folders need no lstat of their own. A listing reads at most a few dozen
// entries per path asked for, so a huge folder costs no more than the lstats
// it saves; a name the listing does not show (not reached, missing, spelled in
// another case, of unknown type) is checked as before. Call it before
// deciding, not concurrently with Decide.
func (b *Batch) Prefetch(paths []string) {
	count := map[string]int{}
	for _, path := range paths {
		if _, dir, _, ok := batchSplit(path); ok {
			count[dir]++
		}
	}
	for dir, n := range count {
		if n < listFrom {
			continue
		}
		if cdir := b.dir(dir); cdir.err == nil {
			b.list(cdir.path, 32*n+256)
		}
	}
}

// batchSplit splits a path that Decide resolves folder by folder into its
// cleaned folder and name.
func batchSplit(path string) (lex, dir, name string, ok bool) {
	if path == "" || !filepath.IsAbs(path) || strings.IndexByte(path, 0) >= 0 {
		return "", "", "", false
	}
	lex = filepath.Clean(path)
	if lex != path && hasDotDot(path) || lex == "/" {
		return "", "", "", false
	}
	dir, name = filepath.Split(lex)
	return lex, filepath.Clean(dir), name, true
}

// list reads up to budget entries of the canonical folder dir and notes
// those that are plain files or folders, not symlinks.
func (b *Batch) list(dir string, budget int) {
	f, err := os.Open(dir)
	if err != nil {
		return
	}
	defer f.Close()
	names := map[string]struct{}{}
	for budget > 0 {
		entries, err := f.ReadDir(min(budget, 1024))
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
	if b.plain == nil {
		b.plain = map[string]map[string]struct{}{}
	}
	b.plain[dir] = names
}
