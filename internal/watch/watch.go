package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
)

// Root is a folder to watch and the agent whose transcripts it holds.
type Root struct {
	Agent   string // "claude", "codex", "gemini", "crush", "opencode"
	Dir     string
	Factory importers.Factory // JSON-lines transcripts (*.jsonl)
	// Source, when set, imports the files Match accepts instead (a
	// database is due when its -wal is written). Prune names folders not to
	// watch (opencode's storage of parts, one folder per message).
	Source *importers.Source
	Match  func(path string) bool
	Prune  func(dir string) bool
	// Slow: each import copies the source whole (a database), so its
	// files wait SlowFactor times longer for quiet, and for their import
	// while written without pause, than transcripts do.
	Slow bool
}

// SlowFactor is how much longer a Slow root's files wait: a database an
// agent writes while it streams would otherwise be copied every MaxWait.
const SlowFactor = 4

// target is the file a write to p makes due in r, if any: a transcript,
// a source file, or the database whose -wal p is.
func (r Root) target(p string) (string, bool) {
	if r.Match == nil {
		return p, strings.HasSuffix(p, ".jsonl")
	}
	if db, ok := strings.CutSuffix(p, "-wal"); ok && r.Match(db) {
		return db, true
	}
	return p, r.Match(p)
}

// Event reports the watcher's work. A pass imports the files that are due
// together, one after the other: it sends an event when it starts (Done 0)
// and one after each file, the last with Finished. Counts are of the pass so
// far. An event with Files == 0 is a problem of the watch itself (a folder
// that cannot be watched), in Err.
type Event struct {
	Files    int      // files in the pass
	Done     int      // files of the pass finished so far
	Messages int      // messages the pass imported so far
	Sessions int      // sessions that gained messages in the pass so far
	Changed  []string // sessions the file just finished added to or revised (sorted)
	// From is, by session in Changed, the first message that may differ:
	// the new ones and the last one before them, which an import revises
	// when a turn it holds grew (further blocks of an assistant turn).
	From map[string]uint64
	// Parents, in a Finished event, are the sessions that sessions the pass
	// changed are subagents of (session.Store.Parents), sorted: what a tier
	// with derived = "redact" withholds of them changed. Subagents are the
	// subagents of the sessions it changed, whose figures rest on their
	// parents up to their own end (tally.Scope), sorted.
	Parents   []string
	Subagents []string
	Failed    int   // files of the pass that could not be imported
	Err       error // the pass's first failure, or the watch's problem
	Finished  bool
}

// Debounce is how long a file must go without being written before it is
// imported: agents append a line at a time. MaxWait bounds how long a file
// that is written without pause waits for its next import.
const (
	Debounce = 250 * time.Millisecond
	MaxWait  = 2 * time.Second
)

// Watcher watches transcript folders and imports what is written there
// into a store. Make it with New, read Events, and Run it.
type Watcher struct {
	st     *session.Store
	roots  []Root
	events chan Event
	// Debounce and MaxWait may be changed before Run (tests shorten them).
	Debounce, MaxWait time.Duration

	// Owned by Run's goroutine.
	fw      *fsnotify.Watcher
	done    <-chan struct{}
	pending map[string]bool // roots that do not exist yet, by Dir
	watched map[string]bool // folders added to fw
	timers  map[string]*timer
	due     map[string]Root
	fire    chan string
	failed  map[string]bool // folders already reported as not watchable
}

type timer struct {
	t     *time.Timer
	first time.Time // the first write of the burst
}

// New returns a watcher of roots that imports into st. Dirs are made
// absolute.
func New(st *session.Store, roots []Root) *Watcher {
	rs := make([]Root, 0, len(roots))
	for _, r := range roots {
		if abs, err := filepath.Abs(r.Dir); err == nil {
			r.Dir = abs
		}
		rs = append(rs, r)
	}
	return &Watcher{st: st, roots: rs, events: make(chan Event, 64), Debounce: Debounce, MaxWait: MaxWait}
}

// Events is where the watcher reports; it is closed when Run returns.
func (w *Watcher) Events() <-chan Event { return w.events }

// Run watches until ctx is done, then returns once the file being imported,
// if any, is done (an import cannot be stopped halfway; the files of the
// pass not yet started are left to the next start). It first removes what
// crashed imports left, once, and imports every transcript already in the
// roots that is new or grew since it was last imported.
func (w *Watcher) Run(ctx context.Context) error {
	defer close(w.events)
	w.done = ctx.Done()
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		err = fmt.Errorf("cannot watch transcript folders: %w", err)
		w.send(Event{Err: err})
		return err
	}
	defer fw.Close()
	w.fw = fw
	w.pending, w.watched, w.failed = map[string]bool{}, map[string]bool{}, map[string]bool{}
	w.timers, w.due, w.fire = map[string]*timer{}, map[string]Root{}, make(chan string)
	defer func() {
		for _, t := range w.timers {
			t.t.Stop()
		}
	}()
	if err := w.st.CleanImports(); err != nil {
		w.send(Event{Err: fmt.Errorf("cannot clean up interrupted imports: %w", err)})
	}
	for _, r := range w.roots {
		w.arm(r)
	}

	work := make(chan []item)
	idle := make(chan struct{}, 1)
	go func() {
		for batch := range work {
			w.pass(ctx, batch)
			idle <- struct{}{}
		}
	}()
	events, errs := fw.Events, fw.Errors
	busy := false
	for {
		if !busy && len(w.due) > 0 {
			work <- w.takeDue()
			busy = true
		}
		select {
		case <-ctx.Done():
			close(work)
			if busy {
				<-idle
			}
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			w.handle(ev)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			w.send(Event{Err: fmt.Errorf("watching transcript folders: %w", err)})
		case p := <-w.fire:
			if t := w.timers[p]; t != nil {
				delete(w.timers, p)
			}
			if r, ok := w.rootOf(p); ok {
				w.due[p] = r
			}
		case <-idle:
			busy = false
		}
	}
}

// send reports ev, unless Run is ending.
func (w *Watcher) send(ev Event) {
	select {
	case w.events <- ev:
	case <-w.done:
	}
}

// --- folders ---

// arm watches root r: the whole tree when it exists (its transcripts are
// due at once), else its nearest existing parent, until it appears.
func (w *Watcher) arm(r Root) {
	if isDir(r.Dir) {
		delete(w.pending, r.Dir)
		w.addTree(r.Dir, false)
		return
	}
	w.pending[r.Dir] = true
	for a := filepath.Dir(r.Dir); ; a = filepath.Dir(a) {
		if isDir(a) {
			w.add(a)
			// The next folder down may have appeared between the stat and
			// the watch: then its event was missed.
			if next := childToward(a, r.Dir); next != "" && isDir(next) {
				w.arm(r)
			}
			return
		}
		if filepath.Dir(a) == a {
			return
		}
	}
}

// addTree watches dir and every folder under it, and makes the transcripts
// in it due: at once when they were there before (settle false), after the
// debounce when the folder just appeared and they may still be written.
func (w *Watcher) addTree(dir string, settle bool) {
	walk := dir
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		walk += string(filepath.Separator) // a root that is a link to a folder: walk the folder
	}
	filepath.WalkDir(walk, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable folder: skip it, keep the rest
		}
		r, ok := w.rootOf(p)
		if d.IsDir() {
			if ok && r.Prune != nil && r.Prune(p) {
				return filepath.SkipDir
			}
			w.add(p)
			return nil
		}
		if !ok {
			return nil
		}
		p, ok = r.target(p)
		switch {
		case !ok:
		case settle:
			w.touch(p)
		default:
			w.due[p] = r
		}
		return nil
	})
}

func (w *Watcher) add(dir string) {
	if w.watched[dir] {
		return
	}
	if err := w.fw.Add(dir); err != nil {
		if !w.failed[dir] {
			w.failed[dir] = true
			msg := err.Error()
			if errors.Is(err, syscall.ENOSPC) {
				msg += " (too many folders: raise fs.inotify.max_user_watches)"
			}
			w.send(Event{Err: fmt.Errorf("cannot watch %s: %s", dir, msg)})
		}
		return
	}
	w.watched[dir] = true
}

// handle takes one file-system event.
func (w *Watcher) handle(ev fsnotify.Event) {
	p := ev.Name
	switch {
	case ev.Has(fsnotify.Create):
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			w.dirAppeared(p)
			return
		}
		w.wrote(p)
	case ev.Has(fsnotify.Write):
		w.wrote(p)
	case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
		w.forget(p)
		for _, r := range w.roots {
			// The root or a folder above it went away. It may be back
			// already, a new folder the old watch does not see and whose
			// Create came before anything watched its parent: watch it
			// again if it is there, else wait for it.
			if within(p, r.Dir) {
				w.arm(r)
			}
		}
	}
}

// forget drops p and every folder under it from the watched set: inotify
// drops the watch of a removed folder, and one made again under the same
// name must be added anew.
func (w *Watcher) forget(p string) {
	if !w.watched[p] {
		return // a file, or a folder not watched
	}
	for dir := range w.watched {
		if within(p, dir) {
			delete(w.watched, dir)
		}
	}
}

func (w *Watcher) dirAppeared(p string) {
	if _, ok := w.rootOf(p); ok {
		w.addTree(p, true)
	}
	for _, r := range w.roots {
		if w.pending[r.Dir] && within(p, r.Dir) {
			w.arm(r)
		}
	}
}

func (w *Watcher) wrote(p string) {
	if r, ok := w.rootOf(p); ok {
		if t, ok := r.target(p); ok {
			w.touch(t)
		}
	}
}

// touch starts or extends the quiet period after which p is imported.
func (w *Watcher) touch(p string) {
	debounce, maxWait := w.Debounce, w.MaxWait
	if r, ok := w.rootOf(p); ok && r.Slow {
		debounce, maxWait = debounce*SlowFactor, maxWait*SlowFactor
	}
	now := time.Now()
	if t := w.timers[p]; t != nil {
		if now.Sub(t.first) < maxWait {
			t.t.Reset(debounce)
		}
		return
	}
	done, fire := w.done, w.fire
	t := &timer{first: now}
	t.t = time.AfterFunc(debounce, func() {
		select {
		case fire <- p:
		case <-done:
		}
	})
	w.timers[p] = t
}

// rootOf is the innermost existing root p is in.
func (w *Watcher) rootOf(p string) (Root, bool) {
	var best Root
	found := false
	for _, r := range w.roots {
		if !w.pending[r.Dir] && within(r.Dir, p) && (!found || len(r.Dir) > len(best.Dir)) {
			best, found = r, true
		}
	}
	return best, found
}

// within reports whether p is dir or under it.
func within(dir, p string) bool {
	if p == dir {
		return true
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// childToward is the folder just under a on the way to p ("" if none).
func childToward(a, p string) string {
	rel, err := filepath.Rel(a, p)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	first, _, _ := strings.Cut(rel, string(filepath.Separator))
	return filepath.Join(a, first)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// --- importing ---

type item struct {
	path string
	root Root
}

func (w *Watcher) takeDue() []item {
	batch := make([]item, 0, len(w.due))
	for p, r := range w.due {
		batch = append(batch, item{p, r})
	}
	sort.Slice(batch, func(i, j int) bool { return batch[i].path < batch[j].path })
	w.due = map[string]Root{}
	return batch
}

// pass imports batch, one file after the other, reporting after each.
func (w *Watcher) pass(ctx context.Context, batch []item) {
	ev := Event{Files: len(batch)}
	w.send(ev)
	grown := map[string]bool{}
	var all []string // sessions the pass changed, for Parents and Subagents
	for i, it := range batch {
		if ctx.Err() != nil {
			return
		}
		changed, grew, from, n, err := w.importOne(it)
		ev.Done, ev.Changed, ev.From = i+1, changed, from
		all = append(all, changed...)
		ev.Messages += n
		if err != nil {
			ev.Failed++
			if ev.Err == nil {
				ev.Err = err
			}
		}
		for _, id := range grew {
			grown[id] = true
		}
		ev.Sessions = len(grown)
		ev.Finished = i == len(batch)-1
		if ev.Finished {
			// Once a pass: a parent whose subagents the pass imported
			// is counted again once, not after each of them.
			ev.Parents, ev.Subagents = w.related(all)
		}
		w.send(ev)
	}
}

// related returns the sessions that sessions in changed are subagents of,
// and their subagents, each sorted: those changed too are among them, as
// their counts may have been made before the others' import. One that
// cannot be told is left out: the next import tells it.
func (w *Watcher) related(changed []string) (parents, subagents []string) {
	for _, id := range changed {
		ps, ss, _ := w.st.Related(id)
		parents = append(parents, session.IDs(ps)...)
		subagents = append(subagents, session.IDs(ss)...)
	}
	slices.Sort(parents)
	slices.Sort(subagents)
	return slices.Compact(parents), slices.Compact(subagents)
}

// importOne imports one file and says which sessions it changed, from
// which message on, which of them gained messages, and how many. A file
// that is gone, or is not a regular file (a FIFO named x.jsonl would block
// the read), is passed over.
func (w *Watcher) importOne(it item) (changed, grew []string, from map[string]uint64, messages int, err error) {
	fi, err := os.Stat(it.path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, nil, nil, 0, nil
	}
	before := w.counts(it.path)
	var res importers.Result
	if it.root.Source != nil {
		res, err = importers.ImportSource(w.st, *it.root.Source, it.path, nil)
	} else {
		res, err = importers.Import(w.st, it.root.Agent, it.path, it.root.Factory)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil, 0, nil // deleted since the event
		}
		return nil, nil, nil, 0, err
	}
	if res.Unchanged || res.Incomplete { // caught mid-rewrite: the write that ends it comes
		return nil, nil, nil, 0, nil
	}
	from = map[string]uint64{}
	rec, ok, err := w.st.Origin(res.File)
	if err != nil || !ok {
		if res.SessionID != "" {
			changed, from[res.SessionID] = []string{res.SessionID}, 1
		}
		return changed, changed, from, res.Messages, nil
	}
	for k, id := range rec.Sessions {
		changed = append(changed, id)
		n, seen := before[id]
		from[id] = max(n, 1)
		if !seen || rec.Counts[k] > n {
			grew = append(grew, id)
		}
	}
	sort.Strings(changed)
	sort.Strings(grew)
	return changed, grew, from, res.Messages, nil
}

// counts is, by session, what the last import of file left (nil if none).
func (w *Watcher) counts(file string) map[string]uint64 {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil
	}
	if c, err := policy.Canonical(abs); err == nil {
		abs = c
	}
	rec, ok, err := w.st.Origin(abs)
	if err != nil || !ok {
		return nil
	}
	out := map[string]uint64{}
	for k, id := range rec.Sessions {
		out[id] = rec.Counts[k]
	}
	return out
}
