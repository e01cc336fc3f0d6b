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
	if b.t == nil || path == "" || !filepath.IsAbs(path) || strings.IndexByte(path, 0) >= 0 {
		return b.p.Decide(b.t, path)
	}
	lex := filepath.Clean(path)
	if lex != path && hasDotDot(path) || lex == "/" {
		// ".." must be resolved physically: leave it to the full walk.
		return b.p.Decide(b.t, path)
	}
	b.p.decisions.Add(1)
	dir, name := filepath.Split(lex)
	cdir := b.dir(filepath.Clean(dir))
	if cdir.err != nil {
		return decideForms(b.t, lex, "", cdir.err)
	}
	canon := filepath.Join(cdir.path, name)
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
