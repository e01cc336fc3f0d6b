package ui

import (
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
	busy    bool
	version int // bumped whenever a figure changes
	// epochs are bumped, by session, when its counts go back (rewind): a
	// step that started before may have read messages as they were.
	epochs map[string]int
	kept   map[countKey]*keptState
}

func newCounter() counter {
	return counter{results: map[countKey]*counts{}, failed: map[countKey]bool{}, epochs: map[string]int{}, kept: map[countKey]*keptState{}}
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
	k.busy = false
	k.version++
	if cm.epoch != k.epochs[cm.key.sid] {
		return
	}
	if cm.err != nil {
		k.failed[cm.key] = true
		return
	}
	st := cm.step
	c := k.results[cm.key]
	if c == nil {
		if st.From != 1 {
			return
		}
		c = &counts{denied: map[string]struct{}{}}
		k.results[cm.key] = c
	}
	if st.From != c.upto+1 {
		return
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

// next starts the next counting step, if any is due: jobs are (session,
// message count) pairs in priority order.
func (k *counter) next(x *tally.Contexts, st *session.Store, pol *policy.Policy, model string, jobs []countJob) tea.Cmd {
	if k.busy || st == nil {
		return nil
	}
	for _, j := range jobs {
		key := countKey{j.sid, model}
		if k.failed[key] {
			continue
		}
		ks := k.keptOf(key)
		if !ks.loaded {
			k.busy = true
			return loadKept(st, pol, key, k.epochs[j.sid])
		}
		var upto uint64
		c := k.results[key]
		if c != nil {
			upto = c.upto
		}
		if upto >= j.count {
			if ks.valid && c != nil && ks.saved < c.upto {
				k.busy = true
				return saveKept(st, pol, key, ks.rev, c)
			}
			continue
		}
		k.busy = true
		return countStep(x, st, pol, key, upto+1, min(upto+countChunk, j.count), k.epochs[j.sid])
	}
	return nil
}

// forget drops a session's counts (deleted, or rewritten by an import).
func (k *counter) forget(sid string) {
	k.version++
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
