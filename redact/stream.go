package redact

import (
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/secrets"
	"github.com/scrim-dev/scrim/session"
)

// Stream redacts a session read in batches, in order, so that a command
// holds one batch at a time however long the session is, and gives exactly
// what History gives for the whole session: the batches' results, one after
// another, are History's result, and Report is its report.
//
// What a batch needs from the rest of the session is kept across batches:
// the decision of each distinct path (decided once for the session), and,
// for a tier with derived = "redact", the fingerprints of everything the
// tier withholds of the session. Those must be gathered before the first
// batch is redacted: a first pass hands every batch to Gather, then
// Settle checks what it gathered, and if Stale says so, a second pass
// hands every batch to Recheck; only then does Next take the batches. What is kept is bounded by the session's distinct paths
// and by its withheld content, not by its length.
//
// A Stream is for one session and model, and not safe for concurrent use.
type Stream struct {
	model   string
	p       *policy.Policy
	tier    *policy.Tier
	memo    *Memo
	gather  *DerivedBuilder // nil: the tier does not redact derived content
	derived *Derived
	started bool  // Next has been called: gathering is over
	err     error // Finish's
	// finished: derived holds what was gathered; resumed: it holds a kept
	// gathering instead (Resume).
	finished, resumed bool

	rep    Report
	denied map[string]bool // the paths in rep.DeniedPaths
	spans  spanTally

	// kept: where the fingerprints are in the session, from an earlier
	// search (ResumeMatches); rec notes where they are found
	// (NoteMatches).
	kept *keptMatches
	rec  *matchRecorder
}

// NewStream starts redacting a session for model.
func NewStream(model string, p *policy.Policy) *Stream {
	tier, _ := p.TierFor(model)
	s := &Stream{model: model, p: p, tier: tier, memo: &Memo{}, denied: map[string]bool{},
		spans: spanTally{from: map[string]int{}, rules: map[string]int{}}}
	if tier.RedactsDerived() {
		s.gather = NewDerivedBuilder(model, p)
		s.gather.memo, s.gather.late, s.gather.l = s.memo, true, streamLayout
	}
	s.rep = Report{Tier: Tier{Name: tier.Name, Label: tier.Label}, DeniedPaths: []DeniedPath{}}
	return s
}

// Gathers reports whether the tier needs the gathering passes (Gather, and
// Recheck when Stale) before Next.
func (s *Stream) Gathers() bool { return s.gather != nil }

// Gather gathers the fingerprints of msgs, the session's next batch, in the
// first pass.
func (s *Stream) Gather(msgs []session.Message) {
	s.mustGather()
	s.gather.Add(msgs)
}

// Spill keeps the texts gathered in a temporary file in dir ("": the
// system's temporary folder) while the session is read, not in memory
// (spill.go), and Finish reads back those it keeps. Called before the
// first batch is gathered; dir is best where the session is already kept
// (the store's folder): the texts are of content the tier withholds. The
// file is unlinked as it is made, where the system allows it.
func (s *Stream) Spill(dir string) {
	s.mustGather()
	if c := &s.gather.cands; c.list.n == 0 && c.spill == nil {
		c.spill = newSpilled(dir)
	}
}

// Close lets go of what the stream holds outside memory: the file Spill
// made, when the gathering did not finish (Finish closes it). Where the
// system could not unlink the file as it was made, that removes it.
func (s *Stream) Close() error {
	if s.gather == nil || s.gather.cands.spill == nil {
		return nil
	}
	return s.gather.cands.spill.texts.Close()
}

// Prepare readies msgs, the session's next batch, for GatherPrepared, on
// any goroutine, while the batches before it are gathered from
// (DerivedBuilder.Prepare).
func (s *Stream) Prepare(msgs []session.Message) *Prepared {
	s.mustGather()
	return s.gather.Prepare(msgs)
}

// Expect says the batches to gather are of the session's messages
// from..to (DerivedBuilder.Expect).
func (s *Stream) Expect(from, to uint64) {
	s.mustGather()
	s.gather.Expect(from, to)
}

// GatherPrepared is Gather of a batch Prepare readied.
func (s *Stream) GatherPrepared(p *Prepared) {
	s.mustGather()
	s.gather.AddPrepared(p)
}

// Settle, after the first pass, checks the fingerprints gathered against
// the content the tier may read that the pass met before them, reading
// again, through read, only the messages where one may be
// (DerivedBuilder.Settle).
func (s *Stream) Settle(read func(seqs []uint64, fn func(msgs []session.Message)) error) error {
	s.mustGather()
	return s.gather.Settle(read)
}

// Beside, after Settle, says the batches gathered from now on are of
// other sessions whose withheld content reaches this one's (its subagents':
// session.Store.Subagents). They are gathered as a session grows: a
// fingerprint met in them makes the stream Stale, and Recheck then reads
// this session's batches and theirs again, in the order gathered.
func (s *Stream) Beside() {
	s.mustGather()
	s.gather.CheckLate(false)
}

// Stale reports whether the batches must be read again, through Recheck,
// before Next: Gather only gathers fingerprints, and each must be checked
// against all content the tier may read (a fingerprint found there too is
// not distinctive); Settle does that without reading them all again but
// where it cannot tell.
func (s *Stream) Stale() bool { return s.gather != nil && !s.resumed && s.gather.Stale() }

// Recheck checks msgs, the session's next batch read again from its start,
// against every fingerprint gathered; last says it is the session's last.
func (s *Stream) Recheck(msgs []session.Message, last bool) {
	s.mustGather()
	s.gather.Recheck(msgs, last)
}

// Ready ends the gathering, if there is one: it makes the fingerprints of
// what was gathered (unless Gathered or Resume did), files their index and
// lets their texts go (Derived.Seal): Gathered, which encodes them, comes
// before it. Next and Start call it first; a caller may call it earlier, to
// have that done at a time of its choosing.
func (s *Stream) Ready() {
	if !s.started {
		s.started = true
		if s.gather != nil {
			s.finishGather()
			// Gathered is past: the texts go, and the allowed paths'.
			s.derived.Seal()
			s.memo.compact()
		}
	}
}

func (s *Stream) mustGather() {
	if s.gather == nil || s.started || s.resumed || s.finished {
		panic("redact: Stream gathers only for a tier with derived = \"redact\", and only before Next, Gathered or Resume")
	}
}

// Next returns what model may be sent of msgs, the session's next batch, as
// History would return it within the whole session. findings returns the
// credentials found in a message (secrets.Lookup keeps them in the store);
// nil scans each message that a tier with secrets = "redact" needs.
func (s *Stream) Next(msgs []session.Message, findings func(m *session.Message) []secrets.Finding) []session.Message {
	return s.Start(msgs, findings)()
}

// Start is Next in two halves, for a caller that goes on to the next batch
// while this one is redacted: it starts redacting msgs, the session's next
// batch, on a goroutine of its own, and returns done, which waits for what
// model may be sent of it and takes its report into the session's. Batches
// are started in order, and their dones called in that order; Report only
// after the last. Each batch is redacted as Next redacts it (the decisions
// they share are safe for concurrent use, and the reports are merged in
// order), so the result is the same.
//
// A batch is at most 64 KiB of text (scrim redact), and on a session of
// long tool results a few messages: the derived filter, most of a warm
// preview's time, ran on one core for each, batch after batch. At a million
// messages it was 5.2 of the preview's 7.0 s, all of it on the goroutine
// that handed the batches over.
func (s *Stream) Start(msgs []session.Message, findings func(m *session.Message) []secrets.Finding) (done func() []session.Message) {
	s.Ready()
	type result struct {
		out []session.Message
		rep Report
	}
	c := make(chan result, 1)
	ctx := Context{Derived: s.derived, Findings: findings, Memo: s.memo, whole: true, kept: s.kept}
	if s.rec != nil {
		ctx.notes = &matchNotes{}
	}
	go func() {
		out, rep, _ := history(msgs, s.model, s.p, ctx, streamLayout, false)
		c <- result{out, rep}
	}()
	return func() []session.Message {
		r := <-c
		s.add(&r.rep)
		if ctx.notes != nil {
			s.rec.add(ctx.notes)
		}
		return r.out
	}
}

// add merges a batch's report into the session's.
func (s *Stream) add(r *Report) {
	s.rep.Messages += r.Messages
	s.rep.RedactedMessages += r.RedactedMessages
	s.rep.RedactedParts += r.RedactedParts
	s.rep.UnknownSource += r.UnknownSource
	s.rep.Withheld += r.Withheld
	s.rep.Events += r.Events
	for _, d := range r.DeniedPaths {
		if !s.denied[d.Path] {
			s.denied[d.Path] = true
			s.rep.DeniedPaths = append(s.rep.DeniedPaths, d)
		}
	}
	s.spans.derived += r.Derived
	s.spans.secrets += r.Secrets
	for _, d := range r.DerivedFrom {
		s.spans.from[d.Path] += d.Spans
	}
	for _, x := range r.SecretRules {
		s.spans.rules[x.Rule] += x.Spans
	}
}

// Report is the report of the batches redacted so far: after the last,
// History's report of the whole session.
func (s *Stream) Report() Report {
	r := s.rep
	r.DeniedPaths = append([]DeniedPath{}, s.rep.DeniedPaths...)
	s.spans.report(&r)
	return r
}
