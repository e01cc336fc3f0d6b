package cli

import (
	"errors"
	"runtime/debug"
	"sync/atomic"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/runner"
	"github.com/scrim-dev/scrim/secrets"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/tally"
)

// A streaming command reads, redacts and writes a session redactBatch
// messages at a time, or fewer when they hold redactBytes of text, so that
// the batches in flight (four or five: see readBatches) and their redacted
// copies add a few megabytes to what the store itself holds, however long
// the session and its messages. Measured on the 19,840-message benchmark
// session (file reads of a few kilobytes): 1 MiB batches peaked at 29-32
// MiB anonymous, 256 KiB at 24-25, show at 17-19; on the 1M session of
// short messages, 256 KiB costs no time against 4,096 messages. Later, with
// plain tables (show 10.3-10.4 MiB), the paths-only tier took 15.4-15.6
// MiB at 256 KiB and 13.9-14.5 at 128 KiB, in the same time, and at 1M
// 2.91-3.07 s against 3.01-3.12. With a batch written while the next is
// redacted (one more in flight), 64 KiB: paths only 12.7-13.1 MiB against
// 13.6-14.1, derived = "redact" 15.3-16.2 against 16.1-16.6, at 1M
// 5.9-6.1 s against 5.7-6.2 (three interleaved rounds; show 10.5-11.3
// MiB, 4.3-4.4 s).
const (
	redactBatch = 4096
	redactBytes = 64 << 10
)

// streamRedacted redacts the stored session h for model a batch at a time,
// in order, exactly as runner.Build redacts it whole, and hands each batch
// to fn: stored, as read (events included), and sent, what model may be sent
// of it. It returns the report of the whole session, how many messages were
// read, and the records that could not be decoded (left out, as the store
// leaves them out of a whole load).
//
// For a tier with derived = "redact", the session is read before, to
// gather the fingerprints of what the tier withholds of all of it and check
// them against all content the tier may read (a second time only where a
// fingerprint met late cannot be checked from the first read's log: see
// gather); for secrets = "redact", each
// batch's credentials come from the store (secrets.Lookup), scanned and
// kept there where they are not. Each pass reads the session up to the
// message count h had when the command started: a message appended
// meanwhile is not half seen.
func streamRedacted(st *session.Store, pol *policy.Policy, h session.Header, model string, fn func(stored, sent []session.Message) error) (redact.Report, int, []session.DecodeError, error) {
	s := redact.NewStream(model, pol)
	defer s.Close()
	var keep func() // keeps where the stream found the fingerprints, once it is done
	var related []string
	if s.Gathers() {
		var err error
		if keep, related, err = gather(st, pol, h, model, s); err != nil {
			return redact.Report{}, 0, nil, err
		}
	}
	read := 0
	var look func(b []session.Message) (findings, error)
	if tier, _ := pol.TierFor(model); tier.RedactsSecrets() {
		look = func(b []session.Message) (findings, error) {
			ctx, err := runner.Context(st, h.ID, b, model, pol)
			return ctx.Findings, err
		}
	}
	// fn writes a batch on a goroutine of its own while the next one is
	// redacted: on one goroutine, at 1M messages, the JSON encoding (a
	// sixth of the preview's CPU with derived = "redact") ran with the
	// other core idle but for the reader. Each batch is redacted on a
	// goroutine of its own too (redact.Stream.Start), while the next is
	// read and started: a batch is a few long tool results at most, and
	// the derived filter of one at a time held a warm preview at 1M
	// messages to one core for most of its time.
	type redacted struct {
		stored  []session.Message
		sent    func() []session.Message
		release func()
	}
	out := make(chan redacted)
	written := make(chan error, 1)
	var failed atomic.Bool
	go func() {
		var err error
		for r := range out {
			sent := r.sent() // in order: it takes the batch's report into the session's
			if err == nil {
				if err = fn(r.stored, sent); err != nil {
					failed.Store(true)
				}
			}
			r.release()
		}
		written <- err
	}()
	bad, err := readBatches(st, h, look, func(b []session.Message, found findings, _ bool, release func()) error {
		if failed.Load() {
			release()
			return errStopped // fn's error is the one to tell
		}
		read += len(b)
		out <- redacted{b, s.Start(b, found), release}
		return nil
	})
	close(out)
	if werr := <-written; werr != nil {
		return redact.Report{}, 0, nil, werr
	}
	if err != nil {
		return redact.Report{}, 0, nil, err
	}
	if keep != nil && read > 0 && uint64(read+len(bad)) == h.Count {
		keep()
	}
	rep := s.Report()
	rep.Related = related
	return rep, read, bad, nil
}

// findings are a batch's credentials, by message (redact.Context.Findings).
type findings = func(m *session.Message) []secrets.Finding

// readBatches streams session h, messages 1 to h.Count, to fn in batches of
// redactBatch messages or redactBytes of text (the last one shorter,
// perhaps empty; last says which it is), each with what look, if set,
// found of it. The batches are read and decoded on one goroutine and looked
// up on another while fn handles the one before: look is where a first
// preview scans for credentials and stores what it found, and with it on
// the reader's or fn's goroutine the first preview at 1M messages kept 1.2
// of the two cores busy. fn must call release once it is done with a
// batch, then or later (from any goroutine), and not keep it: its room is
// reused. One batch may be out so, past fn's return.
func readBatches(st *session.Store, h session.Header, look func(b []session.Message) (findings, error), fn func(b []session.Message, found findings, last bool, release func()) error) ([]session.DecodeError, error) {
	type batch struct {
		msgs  []session.Message
		last  bool
		found findings
		err   error
	}
	rooms := 4 // one read into, one waiting, one handled, one out past fn
	if look != nil {
		rooms++ // and one looked up
	}
	read := make(chan batch)
	full := make(chan batch, 1)
	free := make(chan []session.Message, rooms)
	for range rooms {
		free <- nil
	}
	stop := make(chan struct{})
	var bad []session.DecodeError
	var scanErr error
	go func() {
		defer close(read)
		cur := <-free
		size := 0
		bad, scanErr = st.Scan(h.ID, 1, h.Count, func(m *session.Message) error {
			if cur == nil {
				// A room grows to the batches it holds: most are cut by
				// redactBytes long before redactBatch messages (4,096 of
				// them are 1 MiB of structs, three rooms 3 MiB, measured
				// on the 20k session where a batch is ~60 file reads).
				cur = make([]session.Message, 0, min(h.Count, 64))
			}
			cur = append(cur, *m)
			for i := range m.Parts {
				size += len(m.Parts[i].Text) + len(m.Parts[i].Input)
			}
			if len(cur) < redactBatch && size < redactBytes {
				return nil
			}
			size = 0
			select {
			case read <- batch{msgs: cur}:
			case <-stop:
				return errStopped
			}
			cur = <-free // there is always one: fn's, once it is done
			return nil
		})
		if scanErr == nil {
			read <- batch{msgs: cur, last: true}
		}
	}()
	go func() {
		defer close(full)
		for b := range read {
			if look != nil {
				b.found, b.err = look(b.msgs)
			}
			full <- b
		}
	}()
	var err error
	for b := range full {
		release := func() {
			clear(b.msgs) // nothing of the batch outlives it
			free <- b.msgs[:0]
		}
		if err == nil {
			if err = b.err; err == nil {
				err = fn(b.msgs, b.found, b.last, release)
			} else {
				release()
			}
			if err != nil {
				close(stop)
			}
		} else {
			release()
		}
	}
	if err != nil {
		return bad, err
	}
	return bad, scanErr
}

// gather readies s, for a tier that redacts derived content, with the
// fingerprints of what it withholds of the session: the ones kept from an
// earlier preview of the same content, if they still hold, else by reading
// the session's messages that carry a source path (gathering, and checking
// what was gathered against the readable content met before it: Settle
// reads again only where that cannot be told, Recheck all of them), kept
// afterwards for the next time. Keeping is best effort: a gathering that
// cannot be stored is made again next time.
//
// With a kept gathering, where an earlier preview found its fingerprints
// in the session is taken too, if it was kept with it (tally.LoadMatches):
// the stream then searches nothing. Otherwise, with a gathering that is
// kept (now or before), the stream notes where it finds them, and keep,
// called once every batch is redacted, keeps that.
func gather(st *session.Store, pol *policy.Policy, h session.Header, model string, s *redact.Stream) (keep func(), related []string, err error) {
	sc, err := tally.ScopeOf(st, pol, h.ID, model)
	if err != nil {
		return nil, nil, err
	}
	related = sc.IDs()
	rev := sc.Rev
	noting := func(name uint64) func() {
		s.NoteMatches()
		return func() { _ = tally.SaveMatches(st, pol, h.ID, model, rev, h.Count, name, s.Matched) }
	}
	if kept, ok, err := tally.LoadGathered(st, pol, h.ID, model, rev, h.Count); err == nil && ok && s.Resume(kept) {
		name := tally.GatheredName(kept)
		if m, ok, err := tally.LoadMatches(st, pol, h.ID, model, rev, h.Count, name); err == nil && ok && s.ResumeMatches(m) {
			return nil, related, nil
		}
		return noting(name), related, nil
	}
	// A reader per core, as the TUI reads them: one reader, a message at
	// a time while the last batch was gathered from, took 8.96-10.39 s
	// for the first preview at 1M against 8.46-9.81 s (pieces decoded on
	// every core by one reader took 11.7-12.1 s against 9.6-9.8 s).
	// The candidates' texts wait in a file beside the store, not in
	// memory: see redact.Stream.Spill.
	s.Spill(st.Dir())
	s.Expect(1, h.Count)
	err = st.SourcedPiecesPrepared(h.ID, 1, h.Count, gatherPiece, func(b []session.Message) any { return s.Prepare(b) },
		func(_ []session.Message, p any, _ bool) error {
			s.GatherPrepared(p.(*redact.Prepared))
			return nil
		})
	if err != nil {
		return nil, nil, err
	}
	if err := s.Settle(tally.ReadAt(st, h.ID, sc.Own)); err != nil {
		return nil, nil, err
	}
	if len(sc.Related) > 0 {
		// What the sessions of its agent run withhold: a subagent's
		// answer here repeats what it read, a parent's prompt what the
		// parent had read.
		s.Beside()
		prepare := func(b []session.Message) any { return s.Prepare(b) }
		if err := sc.Beside(st, gatherPiece, prepare, func(p any) { s.GatherPrepared(p.(*redact.Prepared)) }); err != nil {
			return nil, nil, err
		}
	}
	if s.Stale() {
		if err := sc.Recheck(st, h.ID, h.Count, gatherPiece, s.Recheck); err != nil {
			return nil, nil, err
		}
	}
	// The fingerprints, their gathering encoded and stored, and their
	// index are made one after another, each beside the one before (the
	// gathering's texts beside all of them), and what they are made from
	// goes as each is made: over that short stretch the collector runs at
	// a twentieth of growth, not the command's quarter. On the 20,000-
	// message benchmark session it had been the first preview's peak.
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	if err := s.Finish(); err != nil {
		return nil, nil, err
	}
	if name, ok, err := tally.KeepGathered(st, pol, h.ID, model, rev, h.Count, s.Gathered); err == nil && ok {
		keep = noting(name)
	}
	s.Ready()
	// What the gathering held and let go is returned to the system before
	// the stream starts, once: the collector's goal (which counts Badger's
	// memtable arena, allocated whole and barely touched) let the freed
	// pages stay resident under the stream's own. One collection; on the
	// 20k benchmark session's first preview 14.61-14.92 MiB against
	// 14.82-15.24 (three benchmark rounds, interleaved).
	debug.FreeOSMemory()
	return keep, related, nil
}

// gatherPiece is how many messages a gathering's reader reads at once.
const gatherPiece = 1024

// errStopped ends a read whose batches are no longer wanted.
var errStopped = errors.New("stopped")
