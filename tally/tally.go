// Package tally counts what a trust tier is sent of a whole session — the
// messages with placeholders, the denied paths, content of unknown source —
// by streaming the session through the one request builder, and keeps the
// figures in the store beside the session, so that reopening it, switching
// back to a model and `scrim sessions --model` cost a read, not a recount.
//
// A kept count says what it was computed from: the session's revision
// (session.Store.Revision), how many messages, and the tier's fingerprint
// under the policy (its patterns as expanded, its keys and, for a tier with
// deny_files, the state of every folder its decisions looked in). When any
// of those no longer holds the count is done again; new messages are counted
// on top of a count that still holds. Only counts are kept: what is sent is
// always built afresh.
package tally

import (
	"sync"

	"github.com/scrim-dev/scrim/internal/cores"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/runner"
	"github.com/scrim-dev/scrim/session"
)

// Chunk is how many messages one counting step streams from the store:
// small enough that a step's garbage (decoded messages, their redacted copy
// and prompt) keeps the heap flat, large enough that a 100,000-message
// session takes about a hundred steps.
const Chunk = 1024

// Step is what counting messages From..To added.
type Step struct {
	From, To uint64
	Redacted []uint64 // Seqs of messages with at least one placeholder
	Unknowns []uint64 // Seqs of messages whose content of unknown source is sent unchecked
	Denied   []string // denied paths, in order of first appearance
	Unknown  int      // tool results of unknown source
	Sent     int      // messages that are sent (events are not)
	Derived  int      // spans that repeat denied content (derived = "redact")
	Secrets  int      // credentials (secrets = "redact")
}

// Count counts messages from..to of session sid for model.
func Count(x *Contexts, st *session.Store, pol *policy.Policy, sid, model string, from, to uint64) (Step, error) {
	out := Step{From: from, To: to}
	msgs := make([]session.Message, 0, min(to-from+1, Chunk))
	if _, err := st.ScanShared(sid, from, to, func(m *session.Message) error {
		msgs = append(msgs, *m)
		return nil
	}); err != nil {
		return out, err
	}
	// What the request builder sends, less the provider's prompt made of
	// it (toPrompt: 0.3 s of CPU at a million messages), which no figure
	// needs. Credentials are looked up only in what is sent
	// (runner.LazyContext): a message the tier withholds whole is not
	// scanned.
	d, err := x.tierFingerprints(st, pol, sid, model)
	if err != nil {
		return out, err
	}
	ctx, found, err := runner.LazyContext(st, sid, msgs, model, pol)
	if err != nil {
		return out, err
	}
	ctx.Derived, ctx.Memo = d, x.decisions(pol, sid, model)
	hist, rep := redact.HistoryWith(msgs, model, pol, ctx)
	if found != nil {
		found.Save()
	}
	for i := range hist {
		if redact.Placeholders(&hist[i]) > 0 {
			out.Redacted = append(out.Redacted, hist[i].Seq)
		}
	}
	for _, r := range redact.PerMessage(msgs, hist) {
		if r.UnknownSource != nil && !r.Withheld && len(r.Redacted) == 0 {
			out.Unknowns = append(out.Unknowns, r.Seq)
		}
	}
	for _, d := range rep.DeniedPaths {
		out.Denied = append(out.Denied, d.Path)
	}
	out.Unknown, out.Sent = rep.UnknownSource, rep.Messages
	out.Derived, out.Secrets = rep.Derived, rep.Secrets
	return out, nil
}

// Counts are the figures of messages 1..Upto.
type Counts struct {
	Upto     uint64
	Redacted []uint64
	Unknowns []uint64
	Denied   []string // each once, in order of first appearance
	Unknown  int
	Sent     int
	Derived  int
	Secrets  int
}

// Add puts a step on top; it must start at c.Upto+1.
func (c *Counts) Add(s Step) {
	seen := make(map[string]bool, len(c.Denied))
	for _, p := range c.Denied {
		seen[p] = true
	}
	for _, p := range s.Denied {
		if !seen[p] {
			seen[p] = true
			c.Denied = append(c.Denied, p)
		}
	}
	c.Upto = s.To
	c.Redacted = append(c.Redacted, s.Redacted...)
	c.Unknowns = append(c.Unknowns, s.Unknowns...)
	c.Unknown += s.Unknown
	c.Sent += s.Sent
	c.Derived += s.Derived
	c.Secrets += s.Secrets
}

// CountAll counts messages c.Upto+1..to on top of c, a step per Chunk on
// every core; the steps are merged in order.
func CountAll(x *Contexts, st *session.Store, pol *policy.Policy, sid, model string, c *Counts, to uint64) error {
	if c.Upto >= to {
		return nil
	}
	var starts []uint64
	for from := c.Upto + 1; from <= to; from += Chunk {
		starts = append(starts, from)
	}
	steps := make([]Step, len(starts))
	errs := make([]error, len(starts))
	// The fingerprints of the whole session are gathered once, before the
	// steps share them.
	if _, err := x.Build(st, pol, sid, model, nil); err != nil {
		return err
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(cores.N(), len(starts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				steps[i], errs[i] = Count(x, st, pol, sid, model, starts[i], min(starts[i]+Chunk-1, to))
			}
		}()
	}
	for i := range starts {
		next <- i
	}
	close(next)
	wg.Wait()
	for i := range steps {
		if errs[i] != nil {
			return errs[i]
		}
		c.Add(steps[i])
	}
	return nil
}
