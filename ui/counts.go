package ui

import (
	"runtime"
	"sort"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/tally"
)

// countChunk is how many messages one counting step streams from the store.
const countChunk = tally.Chunk

// countKey names a whole-session count: a session seen by a model.
type countKey struct{ sid, model string }

// counts are whole-session figures for one model, computed by streaming the
// session through runner.Build in chunks. They grow as chunks arrive; new
// messages are counted on top (upto says how far they go).
type counts struct {
	upto     uint64   // Seqs 1..upto are counted
	redacted []uint64 // Seqs of messages with at least one placeholder
	unknowns []uint64 // Seqs of messages whose content of unknown source is sent unchecked
	denied   map[string]struct{}
	unknown  int // tool results of unknown source
	sent     int // messages that are sent (events are not)
	derived  int // spans that repeat denied content (derived = "redact")
	secrets  int // credentials (secrets = "redact")
	// chunks are the counted steps' own figures, so that the count can go
	// back to a message an import revised and count on from there.
	chunks []chunkFigures
}

// chunkFigures is what one counted step added to counts.
type chunkFigures struct {
	from, to                       uint64
	redacted, unknowns             int // how many of counts' Seqs it added
	denied                         []string
	unknown, sent, derived, secret int
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
	tc := tally.Counts{Upto: c.upto, Redacted: c.redacted, Unknowns: c.unknowns, Unknown: c.unknown,
		Sent: c.sent, Derived: c.derived, Secrets: c.secrets}
	for p := range c.denied {
		tc.Denied = append(tc.Denied, p)
	}
	sort.Strings(tc.Denied)
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
	c := &km.kept.Counts
	kc := &counts{upto: c.Upto, redacted: c.Redacted, unknowns: c.Unknowns, denied: map[string]struct{}{},
		unknown: c.Unknown, sent: c.Sent, derived: c.Derived, secrets: c.Secrets}
	for _, p := range c.Denied {
		kc.denied[p] = struct{}{}
	}
	// One chunk: a rewind into it counts the whole session again.
	kc.chunks = []chunkFigures{{from: 1, to: c.Upto, redacted: len(c.Redacted), unknowns: len(c.Unknowns), denied: c.Denied,
		unknown: c.Unknown, sent: c.Sent, derived: c.Derived, secret: c.Secrets}}
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
		upto = c.upto
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
		c = &counts{denied: map[string]struct{}{}}
		k.results[key] = c
	}
	c.upto = st.To
	c.chunks = append(c.chunks, chunkFigures{from: st.From, to: st.To, redacted: len(st.Redacted), unknowns: len(st.Unknowns),
		denied: st.Denied, unknown: st.Unknown, sent: st.Sent, derived: st.Derived, secret: st.Secrets})
	c.redacted = append(c.redacted, st.Redacted...)
	c.unknowns = append(c.unknowns, st.Unknowns...)
	for _, p := range st.Denied {
		c.denied[p] = struct{}{}
	}
	c.unknown += st.Unknown
	c.sent += st.Sent
	c.derived += st.Derived
	c.secrets += st.Secrets
}

// next starts what counting is due: the steps of the counts in jobs'
// priority order, as many at once as there are cores, each count read back
// from the store first and kept there once complete. jobs are (session,
// message count) pairs.
func (k *counter) next(x *tally.Contexts, st *session.Store, pol *policy.Policy, model string, jobs []countJob) tea.Cmd {
	if st == nil {
		return nil
	}
	var cmds []tea.Cmd
	for _, j := range jobs {
		if k.running >= countWorkers {
			break
		}
		key := countKey{j.sid, model}
		if k.failed[key] {
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
			upto = max(upto, c.upto)
		}
		if upto >= j.count {
			if c != nil && c.upto >= j.count && ks.valid && ks.saved < c.upto && !k.busy {
				k.busy = true
				cmds = append(cmds, saveKept(st, pol, key, ks.rev, c))
			}
			continue
		}
		for k.running < countWorkers && upto < j.count {
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
	k.busy, k.running = false, 0
	k.issued = map[countKey]uint64{}
	k.pending = map[countKey][]tally.Step{}
}

// countWorkers is how many counting steps run at once.
var countWorkers = runtime.GOMAXPROCS(0)

// forget drops a session's counts (deleted, or rewritten by an import).
func (k *counter) forget(sid string) {
	k.version++
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
	for key, ks := range k.kept {
		if key.sid == sid {
			// The revision changed: learn it again before keeping a count.
			ks.loaded, ks.valid, ks.saved = false, false, 0
		}
	}
	k.dropIssued(sid)
	for key, c := range k.results {
		if key.sid != sid || from > c.upto {
			continue
		}
		i := 0
		for i < len(c.chunks) && c.chunks[i].to < from {
			i++
		}
		if i == 0 {
			delete(k.results, key)
			continue
		}
		kept := &counts{denied: map[string]struct{}{}, chunks: c.chunks[:i:i]}
		nr, nu := 0, 0
		for _, f := range kept.chunks {
			kept.upto = f.to
			nr, nu = nr+f.redacted, nu+f.unknowns
			for _, p := range f.denied {
				kept.denied[p] = struct{}{}
			}
			kept.unknown += f.unknown
			kept.sent += f.sent
			kept.derived += f.derived
			kept.secrets += f.secret
		}
		kept.redacted, kept.unknowns = c.redacted[:nr:nr], c.unknowns[:nu:nu]
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
