package ui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/session"
)

// countChunk is how many messages one counting step streams from the store:
// small enough that a step's garbage (decoded messages, their redacted copy
// and prompt) keeps the heap flat, large enough that a 100,000-message
// session takes about a hundred steps.
const countChunk = 1024

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
	key      countKey
	from, to uint64
	redacted []uint64
	unknowns []uint64
	denied   []string
	unknown  int
	sent     int
	derived  int
	secrets  int
	err      error
	epoch    int // the session's epoch in the counter when the step started
}

func countStep(x *contexts, st *session.Store, pol *policy.Policy, key countKey, from, to uint64, epoch int) tea.Cmd {
	return func() tea.Msg {
		msgs := make([]session.Message, 0, min(to-from+1, countChunk))
		_, err := st.Scan(key.sid, from, to, func(m *session.Message) error {
			msgs = append(msgs, *m)
			return nil
		})
		out := countsMsg{key: key, from: from, to: to, err: err, epoch: epoch}
		if err != nil {
			return out
		}
		req, err := x.build(st, pol, key.sid, key.model, msgs)
		if err != nil {
			out.err = err
			return out
		}
		for i := range req.History {
			if countRedacted(&req.History[i]) > 0 {
				out.redacted = append(out.redacted, req.History[i].Seq)
			}
		}
		for _, r := range redact.PerMessage(msgs, req.History) {
			if r.UnknownSource != nil && !r.Withheld && len(r.Redacted) == 0 {
				out.unknowns = append(out.unknowns, r.Seq)
			}
		}
		for _, d := range req.Report.DeniedPaths {
			out.denied = append(out.denied, d.Path)
		}
		out.unknown, out.sent = req.Report.UnknownSource, req.Report.Messages
		out.derived, out.secrets = req.Report.Derived, req.Report.Secrets
		return out
	}
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
}

func newCounter() counter {
	return counter{results: map[countKey]*counts{}, failed: map[countKey]bool{}, epochs: map[string]int{}}
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
	c := k.results[cm.key]
	if c == nil {
		if cm.from != 1 {
			return
		}
		c = &counts{denied: map[string]struct{}{}}
		k.results[cm.key] = c
	}
	if cm.from != c.upto+1 {
		return
	}
	c.upto = cm.to
	c.chunks = append(c.chunks, chunkFigures{from: cm.from, to: cm.to, redacted: len(cm.redacted), unknowns: len(cm.unknowns),
		denied: cm.denied, unknown: cm.unknown, sent: cm.sent, derived: cm.derived, secret: cm.secrets})
	c.redacted = append(c.redacted, cm.redacted...)
	c.unknowns = append(c.unknowns, cm.unknowns...)
	for _, p := range cm.denied {
		c.denied[p] = struct{}{}
	}
	c.unknown += cm.unknown
	c.sent += cm.sent
	c.derived += cm.derived
	c.secrets += cm.secrets
}

// next starts the next counting step, if any is due: jobs are (session,
// message count) pairs in priority order.
func (k *counter) next(x *contexts, st *session.Store, pol *policy.Policy, model string, jobs []countJob) tea.Cmd {
	if k.busy || st == nil {
		return nil
	}
	for _, j := range jobs {
		key := countKey{j.sid, model}
		if k.failed[key] {
			continue
		}
		var upto uint64
		if c := k.results[key]; c != nil {
			upto = c.upto
		}
		if upto >= j.count {
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
}

// rewind makes a session's counts, for every model, go back to before
// message from (an import revised it): the steps from the one holding it
// on are dropped, and counted again.
func (k *counter) rewind(sid string, from uint64) {
	k.epochs[sid]++ // the session's step in flight, if any, is dropped when it comes
	k.version++
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
