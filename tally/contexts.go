package tally

import (
	"cmp"
	"fmt"
	"sync"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/runner"
	"github.com/scrim-dev/scrim/session"
)

// Contexts supply what building a page's request needs from beyond the
// page, for a tier with derived = "redact" or secrets = "redact": the
// fingerprints of what the tier withholds of the whole session (gathered
// once per session and model by streaming the session from the store, then
// extended as it grows), and the credentials found in the page's messages
// (kept in the store beside them: scanned once). Pages, counting steps and
// rebuilds run as commands on other goroutines: contexts are safe for
// concurrent use, and a second page waits for the first to finish
// gathering rather than gathering again.
type Contexts struct {
	mu      sync.Mutex
	derived map[key]*derivedEntry
}

// key names a session seen by a model.
type key struct{ sid, model string }

type derivedEntry struct {
	// decided is what counting has decided of the session's paths
	// (Contexts.decisions); set under Contexts.mu, safe for concurrent use.
	decided *redact.Memo

	mu   sync.Mutex
	b    *redact.DerivedBuilder
	upto uint64 // Seqs 1..upto are gathered
	d    *redact.Derived
	// scope is the Scope.Rev b gathered at: its agent run's sessions as
	// they were then. Another makes the session be gathered again from
	// its start.
	scope uint64
	// kept: b holds nothing of d, which was read back from what an
	// earlier gathering kept in the store (LoadGathered), or gathered
	// from so much withheld content that b let its candidates go
	// (largeGathering); the session grown, it is gathered again from its
	// start.
	kept bool
}

// NewContexts makes an empty Contexts.
func NewContexts() *Contexts { return &Contexts{derived: map[key]*derivedEntry{}} }

// entry is the entry of session sid seen by model, made if there is none.
// x.mu must be held.
func (x *Contexts) entry(pol *policy.Policy, sid, model string) *derivedEntry {
	k := key{sid, model}
	e := x.derived[k]
	if e == nil {
		e = &derivedEntry{b: redact.NewDerivedBuilder(model, pol)}
		x.derived[k] = e
	}
	return e
}

// decisions returns what the steps of counting session sid for model have
// decided of its paths: each distinct path is decided once for the whole
// count, not once per step (lstat-ing every path of every step was a
// twentieth of a first count's CPU at a million messages). Pages decide
// afresh, as they are built.
func (x *Contexts) decisions(pol *policy.Policy, sid, model string) *redact.Memo {
	x.mu.Lock()
	defer x.mu.Unlock()
	e := x.entry(pol, sid, model)
	if e.decided == nil {
		e.decided = new(redact.Memo)
	}
	return e.decided
}

// Build is runner.BuildWith with the context for msgs, a piece of session
// sid. A context that cannot be read fails the page rather than show it
// without derived or secret redaction.
func (x *Contexts) Build(st *session.Store, pol *policy.Policy, sid, model string, msgs []session.Message) (runner.Request, error) {
	ctx, err := x.context(st, pol, sid, model, msgs)
	if err != nil {
		return runner.Request{}, err
	}
	return runner.BuildWith(msgs, sid, model, pol, ctx), nil
}

func (x *Contexts) context(st *session.Store, pol *policy.Policy, sid, model string, msgs []session.Message) (redact.Context, error) {
	tier, _ := pol.TierFor(model)
	if st == nil || !tier.RedactsDerived() && !tier.RedactsSecrets() {
		return redact.Context{}, nil
	}
	ctx, err := runner.Context(st, sid, msgs, model, pol)
	if err != nil {
		return ctx, err
	}
	ctx.Derived, err = x.tierFingerprints(st, pol, sid, model)
	return ctx, err
}

// tierFingerprints is the fingerprints of session sid for model, for a
// tier with derived = "redact" (nil for any other).
func (x *Contexts) tierFingerprints(st *session.Store, pol *policy.Policy, sid, model string) (*redact.Derived, error) {
	tier, _ := pol.TierFor(model)
	if st == nil || !tier.RedactsDerived() {
		return nil, nil
	}
	return x.fingerprints(st, pol, sid, model)
}

// Ready reports whether pages of session sid can be built for model now,
// without waiting for the session's fingerprints to be gathered: when its
// tier does not redact derived content, or they are gathered up to the
// session's end. A page that is not ready is shown as still computing, and
// built (by a rebuild, off the UI's thread) once they are.
func (x *Contexts) Ready(st *session.Store, pol *policy.Policy, sid, model string) bool {
	tier, _ := pol.TierFor(model)
	if st == nil || !tier.RedactsDerived() {
		return true
	}
	x.mu.Lock()
	e := x.derived[key{sid, model}]
	x.mu.Unlock()
	if e == nil || !e.mu.TryLock() {
		return false // not started, or being gathered
	}
	defer e.mu.Unlock()
	h, err := st.Get(sid)
	return err != nil || e.upto >= h.Count
}

// Holds reports whether x has begun on session sid for model: its pages or
// counts are being built (the TUI's open session), so what it gathers of
// the session it gathers anyway, once, and keeps. Ready says whether that
// is done.
func (x *Contexts) Holds(sid, model string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.derived[key{sid, model}] != nil
}

// fingerprints returns the tier's fingerprints of the whole of session sid
// as stored now: content withheld later in a session (a file read after the
// user pasted it) counts as much as content withheld earlier.
func (x *Contexts) fingerprints(st *session.Store, pol *policy.Policy, sid, model string) (*redact.Derived, error) {
	x.mu.Lock()
	e := x.entry(pol, sid, model)
	x.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	// A read that fails leaves nothing half gathered behind: the next try
	// (a page's retry) starts over.
	fail := func(err error) (*redact.Derived, error) {
		e.b, e.upto, e.d = redact.NewDerivedBuilder(model, pol), 0, nil
		return nil, err
	}
	h, err := st.Get(sid)
	if err != nil {
		return nil, err
	}
	sc, err := ScopeOf(st, pol, sid, model)
	if err != nil {
		return nil, err
	}
	if sc.Rev != e.scope && e.upto > 0 {
		// A subagent imported, grown or rewritten since, a parent
		// rewritten (or the session itself revised): what they withhold
		// is gathered again.
		e.b, e.upto, e.d, e.kept = redact.NewDerivedBuilder(model, pol), 0, nil, false
	}
	if h.Count <= e.upto {
		return e.d, nil
	}
	if e.kept {
		e.b, e.upto, e.d, e.kept = redact.NewDerivedBuilder(model, pol), 0, nil, false
	}
	// A gathering from the start: what the last one kept in the store, if
	// it still holds (redact.ResumeDerived decides its paths again), else
	// gathered now, and kept for the next start.
	rev := sc.Rev
	whole := e.upto == 0
	if whole {
		e.scope = sc.Rev
		if kept, ok, err := LoadGathered(st, pol, sid, model, rev, h.Count); err == nil && ok {
			if d, ok := redact.ResumeDerived(kept, model, pol); ok {
				e.d, e.upto, e.kept = d, h.Count, true
				return e.d, nil
			}
		}
		e.b.Remember()
		e.b.CheckLate(true)
		e.b.LogRoom(lateLogRoom)
		defer func() { e.b.Forget(); e.b.CheckLate(false) }()
	}
	e.b.Expect(e.upto+1, h.Count)
	err = st.SourcedPiecesPrepared(sid, e.upto+1, h.Count, gatherPiece, func(msgs []session.Message) any { return e.b.Prepare(msgs) },
		func(_ []session.Message, p any, _ bool) error {
			e.b.AddPrepared(p.(*redact.Prepared))
			return nil
		})
	if err != nil {
		return fail(err)
	}
	if whole {
		if err := e.b.Settle(ReadAt(st, sid, sc.Own)); err != nil {
			return fail(err)
		}
		if len(sc.Related) > 0 {
			// What the sessions of its agent run withhold: a subagent's
			// answer here repeats what it read, a parent's prompt what
			// the parent had read. Gathered as a session grows
			// (CheckLate off), so a fingerprint met there makes the
			// builder stale.
			e.b.CheckLate(false)
			if err := sc.Beside(st, gatherPiece, func(msgs []session.Message) any { return e.b.Prepare(msgs) }, func(p any) { e.b.AddPrepared(p.(*redact.Prepared)) }); err != nil {
				return fail(err)
			}
		}
	}
	if e.b.Stale() {
		// Fingerprints met late: check them against the content before
		// (the agent run's too).
		if err := sc.Recheck(st, sid, h.Count, gatherPiece, e.b.Recheck); err != nil {
			return fail(err)
		}
	}
	e.upto = h.Count
	if whole && e.b.Candidates() > largeGathering {
		e.d, e.kept = e.b.DoneDropping(), true
	} else {
		e.d = e.b.Done()
	}
	if whole {
		_ = SaveGathered(st, pol, sid, model, rev, h.Count, func(b []byte, most int) []byte { return e.b.Gathered(e.d, b, most) }) // a cache: best effort
	}
	if e.kept {
		// Gathered again from the start if the session grows: the texts
		// are not wanted past the save (at 1M messages, tens of MB).
		e.d.Seal()
	}
	return e.d, nil
}

// ReadAt reads messages of session sid by Seq for a gathering's Settle
// (redact.DerivedBuilder.Settle), a piece at a time. Settle trusts them to
// be the messages gathered from, at revision rev: a session an import
// revised since fails the read.
func ReadAt(st *session.Store, sid string, rev uint64) func(seqs []uint64, fn func(msgs []session.Message)) error {
	return func(seqs []uint64, fn func(msgs []session.Message)) error {
		_, err := st.ScanAt(sid, seqs, gatherPiece, func(msgs []session.Message) error {
			fn(msgs)
			return nil
		})
		if err != nil {
			return err
		}
		if now, err := st.Revision(sid); err != nil || now != rev {
			return cmp.Or(err, fmt.Errorf("session %s changed while it was read (an import revised it)", sid))
		}
		return nil
	}
}

// largeGathering is how many candidates a whole gathering's builder may
// hold and keep, to extend the gathering as the session grows. A builder
// lives as long as the program: one with more lets them go once it is
// done, and the session grows as after a restart (at a million messages
// that withhold half their reads, 2.35M candidates, about 180 MB). A
// variable for tests.
var largeGathering = 1 << 20

// lateLogRoom is the room a whole gathering's log of readable content has
// for Settle however few its candidates (redact.DerivedBuilder.LogRoom):
// a million-message import that withholds a tenth of its reads notes 4.6M
// pieces, 25 MB, for 497k candidates of 27 MB, and with half of theirs it
// was read again whole, 2.4 s of the TUI's first count. The TUI's bound
// is its count's memory (200 MB), not a preview's.
const lateLogRoom = 32 << 20

// gatherPiece is how many messages a gathering's reader reads at once.
const gatherPiece = 4 * Chunk

// Forget drops what is kept of a session (deleted, or rewritten by an
// import).
func (x *Contexts) Forget(sid string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for k := range x.derived {
		if k.sid == sid {
			delete(x.derived, k)
		}
	}
}
