package ui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/scrim-dev/scrim/internal/cores"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/tally"
)

// countChunk is how many messages one counting step streams from the store.
const countChunk = tally.Chunk

// countKey names a whole-session count: a session seen by a model.
type countKey struct{ sid, model string }

// counts are whole-session figures for one model (tally.Counts), computed
// by streaming the session through runner.Build in chunks. They grow as
// chunks arrive; new messages are counted on top (Upto says how far they go).
type counts struct {
	tally.Counts
	// chunks are the counted steps' own figures, so that the count can go
	// back to a message an import revised and count on from there.
	chunks []chunkFigures
}

// chunkFigures is what one counted step added to counts: a tally.Step
// whose Seqs are counted, not kept twice.
type chunkFigures struct {
	step               tally.Step // without its Redacted and Unknowns
	redacted, unknowns int        // how many of counts' Seqs it added
}

func figuresOf(st tally.Step) chunkFigures {
	f := chunkFigures{step: st, redacted: len(st.Redacted), unknowns: len(st.Unknowns)}
	f.step.Redacted, f.step.Unknowns = nil, nil
	return f
}

// countsMsg is one counted chunk.
type countsMsg struct {
	key   countKey
	step  tally.Step
	err   error
	epoch int // the session's epoch in the counter when the step started
}

func countStep(x *tally.Contexts, st *session.Store, pol *policy.Policy, key countKey, from, to uint64, epoch int) tea.Cmd {
	return func() tea.Msg {
		step, err := tally.Count(x, st, pol, key.sid, key.model, from, to)
		return countsMsg{key: key, step: step, err: err, epoch: epoch}
	}
}

// keptMsg is a count read back from the store (tally.Load).
type keptMsg struct {
	key   countKey
	kept  tally.Kept
	ok    bool
	rev   uint64
	err   error
	epoch int
}

func loadKept(st *session.Store, pol *policy.Policy, key countKey, epoch int) tea.Cmd {
	return func() tea.Msg {
		k, ok, rev, err := tally.Load(st, pol, key.sid, key.model)
		return keptMsg{key: key, kept: k, ok: ok, rev: rev, err: err, epoch: epoch}
	}
}

// savedMsg says a count up to upto is kept in the store.
type savedMsg struct {
	key  countKey
	upto uint64
}

func saveKept(st *session.Store, pol *policy.Policy, key countKey, rev uint64, c *counts) tea.Cmd {
	// A copy of the figures: the counter may count on top while this runs
	// (appending past what the copy holds).
	tc := c.Counts
	return func() tea.Msg {
		// A count not kept is counted again next time: nothing to report.
		_ = tally.Save(st, pol, key.sid, key.model, rev, tc)
		return savedMsg{key: key, upto: tc.Upto}
	}
}

// keptState is what the counter knows of a count kept in the store.
type keptState struct {
	loaded bool   // tally.Load has answered
	rev    uint64 // the session's revision the count in memory is of
	valid  bool   // rev is known: the count may be kept
	saved  uint64 // kept up to this message
}

// counter runs one counting step at a time: the open session first, then
// the listed sessions, for the active model. Results are kept per model,
// so switching back to a model shows its figures at once.
type counter struct {
	results map[countKey]*counts
	failed  map[countKey]bool // a step failed: not retried until the session reloads
	busy    bool              // a kept count is being read or written
	// Counting steps run on every core: running are in flight, issued is
	// where the last one issued for a count ends, and pending holds steps
	// that arrived before the ones they follow.
	running int
	issued  map[countKey]uint64
	pending map[countKey][]tally.Step
	version int // bumped whenever a figure changes
	// epochs are bumped, by session, when its counts go back (rewind): a
	// step that started before may have read messages as they were.
	epochs map[string]int
	kept   map[countKey]*keptState
	// done is how many jobs at the front of the ones next was last given
	// need nothing more (counted whole and kept, or failed), for that
	// model and those jobs (countJobs.list and open): next takes up past
	// them.
	// Walked from the first job each time, a store of 10,000 sessions,
	// all counted, cost a key 2.7 ms and 2.4 MB in Update, and counting
	// them all a minute of the UI's time (every answer walked the list
	// again). resets is bumped whenever a job that needed nothing may need
	// something again (forget, rewind, drop).
	done   doneJobs
	resets uint64
	looked int // jobs next has looked at (tests)
}

type doneJobs struct {
	model        string
	list, resets uint64
	open         countJob
	n            int
}

// countJobs are the counts to make, most wanted first (Model.countJobs):
// n of them, the i-th at(i): the open session, if any, then the listed
// ones. list names the sessions listed (sessionList.items): a next given
// the same list and open session for the same model is given the same
// jobs. 0: not known, next looks at every job.
type countJobs struct {
	n    int
	at   func(i int) countJob
	list uint64
	open countJob
}

func newCounter() counter {
	return counter{results: map[countKey]*counts{}, failed: map[countKey]bool{}, epochs: map[string]int{},
		kept: map[countKey]*keptState{}, issued: map[countKey]uint64{}, pending: map[countKey][]tally.Step{}}
}

func (k *counter) keptOf(key countKey) *keptState {
	ks := k.kept[key]
	if ks == nil {
		ks = &keptState{}
		k.kept[key] = ks
	}
	return ks
}

// takeKept starts from a count kept in the store, when nothing is counted
// yet; either way it learns the session's revision.
func (k *counter) takeKept(km keptMsg) {
	k.busy = false
	if km.epoch != k.epochs[km.key.sid] {
		return // the session changed meanwhile: ask again
	}
	ks := k.keptOf(km.key)
	ks.loaded = true
	if km.err != nil {
		return // counted in full, and not kept
	}
	ks.rev, ks.valid = km.rev, true
	if !km.ok || k.results[km.key] != nil {
		return
	}
	k.version++
	c := km.kept.Counts
	// One chunk: a rewind into it counts the whole session again.
	kc := &counts{Counts: c, chunks: []chunkFigures{figuresOf(tally.Step{From: 1, To: c.Upto, Redacted: c.Redacted,
		Unknowns: c.Unknowns, Denied: c.Denied, Unknown: c.Unknown, Sent: c.Sent, Derived: c.Derived, Secrets: c.Secrets})}}
	k.results[km.key] = kc
	ks.saved = c.Upto
}

func (k *counter) takeSaved(sm savedMsg) {
	k.busy = false
	if ks := k.kept[sm.key]; ks != nil {
		ks.saved = max(ks.saved, sm.upto)
	}
}

func (k *counter) get(key countKey) *counts { return k.results[key] }

// take merges a chunk when it continues what is counted; anything else (a
// session that changed underneath, a deleted one) is dropped.
func (k *counter) take(cm countsMsg) {
	k.running--
	k.version++
	if cm.epoch != k.epochs[cm.key.sid] || k.failed[cm.key] {
		return
	}
	if cm.err != nil {
		k.failed[cm.key] = true
		delete(k.pending, cm.key)
		return
	}
	k.pending[cm.key] = append(k.pending[cm.key], cm.step)
	for k.mergeNext(cm.key) {
	}
}

// mergeNext merges the pending step that continues what is counted, if it
// has come.
func (k *counter) mergeNext(key countKey) bool {
	var upto uint64
	if c := k.results[key]; c != nil {
		upto = c.Upto
	}
	steps := k.pending[key]
	for i, st := range steps {
		if st.From == upto+1 {
			k.pending[key] = append(steps[:i:i], steps[i+1:]...)
			k.merge(key, st)
			return true
		}
	}
	return false
}

func (k *counter) merge(key countKey, st tally.Step) {
	c := k.results[key]
	if c == nil {
		c = &counts{}
		k.results[key] = c
	}
	c.Add(st)
	c.chunks = append(c.chunks, figuresOf(st))
}

// next starts what counting is due: the steps of the counts in jobs'
// priority order, as many at once as there are cores, each count read back
// from the store first and kept there once complete. jobs are (session,
// message count) pairs.
func (k *counter) next(x *tally.Contexts, st *session.Store, pol *policy.Policy, model string, jobs countJobs) tea.Cmd {
	if st == nil {
		return nil
	}
	from := 0
	if d := k.done; jobs.list != 0 && d.list == jobs.list && d.open == jobs.open && d.model == model && d.resets == k.resets {
		from = d.n
	}
	k.done = doneJobs{model: model, list: jobs.list, open: jobs.open, resets: k.resets, n: from}
	// done reports that job i needs nothing more; while the jobs before
	// it do too, the front moves past it.
	front := true
	done := func(i int) {
		if front && i == k.done.n {
			k.done.n++
		}
	}
	var cmds []tea.Cmd
	most := stepsAtOnce()
	for i := from; i < jobs.n; i++ {
		if k.running >= most {
			break
		}
		k.looked++
		j := jobs.at(i)
		key := countKey{j.sid, model}
		if j.count == 0 || k.failed[key] { // nothing to count, or not again
			done(i)
			continue
		}
		ks := k.keptOf(key)
		if !ks.loaded {
			if !k.busy {
				k.busy = true
				cmds = append(cmds, loadKept(st, pol, key, k.epochs[j.sid]))
			}
			break // a count of a later job waits: the order is the priority
		}
		c := k.results[key]
		upto := k.issued[key]
		if c != nil {
			upto = max(upto, c.Upto)
		}
		if upto >= j.count {
			switch {
			case c == nil || c.Upto < j.count: // steps in flight
				front = false
			case ks.valid && ks.saved < c.Upto: // to keep
				if !k.busy {
					k.busy = true
					cmds = append(cmds, saveKept(st, pol, key, ks.rev, c))
				}
				front = false
			default:
				done(i)
			}
			continue
		}
		front = false
		for k.running < most && upto < j.count {
			to := min(upto+countChunk, j.count)
			cmds = append(cmds, countStep(x, st, pol, key, upto+1, to, k.epochs[j.sid]))
			k.running++
			k.issued[key], upto = to, to
		}
	}
	return tea.Batch(cmds...)
}

// drop forgets what next issued: for a caller that did not run it (the
// benchmarks hold counting back this way).
func (k *counter) drop() {
	k.resets++
	k.busy, k.running = false, 0
	k.issued = map[countKey]uint64{}
	k.pending = map[countKey][]tally.Step{}
}

// countWorkers is how many counting steps run at once; 0: as many as
// the cores the program's work is spread over, less one while the user is
// at the keys (cores.Free): with a step on every core, scrolling while the
// TUI counted had steps of 50-70 ms.
var countWorkers = 0

func stepsAtOnce() int {
	if countWorkers > 0 {
		return countWorkers
	}
	return cores.Free()
}

// forget drops a session's counts (deleted, or rewritten by an import).
func (k *counter) forget(sid string) {
	k.version++
	k.resets++
	k.epochs[sid]++ // its steps in flight are dropped when they come
	for key := range k.results {
		if key.sid == sid {
			delete(k.results, key)
		}
	}
	for key := range k.failed {
		if key.sid == sid {
			delete(k.failed, key)
		}
	}
	for key := range k.kept {
		if key.sid == sid {
			delete(k.kept, key)
		}
	}
	k.dropIssued(sid)
}

// dropIssued forgets the steps issued for a session's counts: those in
// flight are dropped when they come (the epoch moved on).
func (k *counter) dropIssued(sid string) {
	for key := range k.issued {
		if key.sid == sid {
			delete(k.issued, key)
			delete(k.pending, key)
		}
	}
}

// rewind makes a session's counts, for every model, go back to before
// message from (an import revised it): the steps from the one holding it
// on are dropped, and counted again.
func (k *counter) rewind(sid string, from uint64) {
	k.epochs[sid]++ // the session's step in flight, if any, is dropped when it comes
	k.version++
	k.resets++
	for key, ks := range k.kept {
		if key.sid == sid {
			// The revision changed: learn it again before keeping a count.
			ks.loaded, ks.valid, ks.saved = false, false, 0
		}
	}
	k.dropIssued(sid)
	for key, c := range k.results {
		if key.sid != sid || from > c.Upto {
			continue
		}
		i := 0
		for i < len(c.chunks) && c.chunks[i].step.To < from {
			i++
		}
		if i == 0 {
			delete(k.results, key)
			continue
		}
		// The kept steps again, their Seqs taken back from c's.
		kept := &counts{chunks: c.chunks[:i:i]}
		nr, nu := 0, 0
		for _, f := range kept.chunks {
			st := f.step
			st.Redacted, st.Unknowns = c.Redacted[nr:nr+f.redacted], c.Unknowns[nu:nu+f.unknowns]
			nr, nu = nr+f.redacted, nu+f.unknowns
			kept.Add(st)
		}
		k.results[key] = kept
	}
	for key := range k.failed {
		if key.sid == sid {
			delete(k.failed, key)
		}
	}
}

type countJob struct {
	sid   string
	count uint64
}
