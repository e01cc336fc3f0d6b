package redact

import (
	"cmp"
	"slices"
	"strings"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/secrets"
	"github.com/scrim-dev/scrim/session"
)

// gathered is what one goroutine's share of the path pass withheld, and the
// content it let through from paths the tier may read, for derived
// redaction.
type gathered struct {
	withheld []withheldText
	allowed  []allowedText
	seq      uint64 // the message being fixed up
	// unknown marks the message being fixed up as of unknown source: its
	// content may hold more than its paths', so it does not say what the
	// tier may read.
	unknown bool
}

// whole gathers from m, a message attributed as a whole: all of it is the
// first denied path's, or, with none denied, content the tier may read.
func (g *gathered) whole(d *decisions, m *session.Message, denied []int32, order int64) {
	for i := range m.Parts {
		p := &m.Parts[i]
		if p.Kind == session.PartToolCall || p.Redacted {
			continue
		}
		switch {
		case len(denied) > 0:
			g.withheld = append(g.withheld, withheldText{p.Text, d.set.paths[denied[0]], order + int64(i)})
		case !g.unknown:
			g.allowed = append(g.allowed, allowedText{p.Text, g.seq})
		}
	}
}

// gatherAll runs the path pass over msgs only to gather: one share of the
// work per goroutine that did it.
func gatherAll(msgs []session.Message, model string, p *policy.Policy, m *Memo, l layout) []*gathered {
	_, _, gs := history(msgs, model, p, Context{Memo: m}, l, true)
	return gs
}

func allowedOf(gs []*gathered) [][]allowedText {
	out := make([][]allowedText, len(gs))
	for i, g := range gs {
		out[i] = g.allowed
	}
	return out
}

// derivedOf builds, from what one call's path pass gathered, the tier's
// fingerprints. Content the tier may read is only looked at when there is
// something to look for.
func derivedOf(gs []*gathered, label string) *Derived {
	var c candidates
	c.init()
	c.fileAll(gs, cutAll(gs, c.seed), 0)
	if c.list.n == 0 {
		return nil
	}
	c.check(allowedOf(gs), nil)
	return build(&c, label)
}

// filterer replaces derived content and credentials in one call's copies.
type filterer struct {
	label    string
	derived  *Derived
	secrets  bool
	findings func(*session.Message) []secrets.Finding
	// kept: where derived's fingerprints are, from a record of an earlier
	// search (Stream.ResumeMatches), instead of searching; notes: where
	// the search finds them, for such a record (Stream.NoteMatches).
	kept  *keptMatches
	notes *matchNotes
}

// spanTally counts what a goroutine's filtering replaced.
type spanTally struct {
	derived, secrets int
	from             map[string]int // derived spans by path
	rules            map[string]int // secrets by rule
}

func (t *spanTally) count(sp span) {
	if sp.kind == "derived" {
		t.derived++
		if t.from == nil {
			t.from = map[string]int{}
		}
		t.from[sp.path]++
		return
	}
	t.secrets++
	if t.rules == nil {
		t.rules = map[string]int{}
	}
	t.rules[sp.rule]++
}

func (t *spanTally) add(o *spanTally) {
	t.derived += o.derived
	t.secrets += o.secrets
	for k, v := range o.from {
		if t.from == nil {
			t.from = map[string]int{}
		}
		t.from[k] += v
	}
	for k, v := range o.rules {
		if t.rules == nil {
			t.rules = map[string]int{}
		}
		t.rules[k] += v
	}
}

func (t *spanTally) report(r *Report) {
	r.Derived, r.Secrets = t.derived, t.secrets
	r.DerivedFrom, r.SecretRules = []PathCount{}, []RuleCount{}
	for k, v := range t.from {
		r.DerivedFrom = append(r.DerivedFrom, PathCount{k, v})
	}
	for k, v := range t.rules {
		r.SecretRules = append(r.SecretRules, RuleCount{k, v})
	}
	slices.SortFunc(r.DerivedFrom, func(a, b PathCount) int { return strings.Compare(a.Path, b.Path) })
	slices.SortFunc(r.SecretRules, func(a, b RuleCount) int { return strings.Compare(a.Rule, b.Rule) })
}

// filter filters the copies in out of block b's messages.
func (c *chunk) filter(out []session.Message, b int, f *filterer, t *tally) {
	lo, hi := b*c.block, min((b+1)*c.block, len(c.in))
	k := c.at + int(c.blocks[b].out)
	for i := lo; i < hi; i++ {
		m := &c.in[i]
		if m.Role == session.RoleEvent {
			continue
		}
		f.message(m, &out[k], t)
		k++
	}
}

// message replaces, in sent (the copy of stored, after the path pass),
// every span of derived content and every credential of what is still
// content.
func (f *filterer) message(stored, sent *session.Message, t *tally) {
	if placeholdersOnly(sent) {
		return // nothing of it is sent to look in, nor to scan
	}
	var found []secrets.Finding
	if f.secrets {
		if f.findings != nil {
			found = f.findings(stored)
		} else {
			found = secrets.Scan(stored)
		}
	}
	if f.derived == nil && len(found) == 0 {
		return
	}
	var of []int // sent part → stored part, worked out when first needed
	var room [8]int
	before := countPlaceholders(sent.Parts)
	changed := false
	for j := range sent.Parts {
		sp := &sent.Parts[j]
		if sp.Redacted || len(found) == 0 && !f.derived.mayMatch(sp) {
			continue
		}
		if of == nil {
			if len(sent.Parts) <= len(room) {
				of = partsOfInto(room[:], stored.Parts, sent.Parts)
			} else {
				of = partsOf(stored.Parts, sent.Parts)
			}
		}
		if of[j] >= 0 && f.part(sp, stored.Seq, of[j], found, t) {
			changed = true
		}
	}
	if changed && before == 0 {
		t.redactedMessages++
	}
}

// placeholdersOnly reports whether every part of m is a placeholder (or m
// has none): what a tier withholds whole.
func placeholdersOnly(m *session.Message) bool {
	for i := range m.Parts {
		if !m.Parts[i].Redacted {
			return false
		}
	}
	return true
}

// mayMatch reports whether a fingerprint may be in p: whether it is long
// enough to hold one. Searching it here would search each part that has
// one twice, once to tell and once to replace (measured: a fifth of the
// matching time of a million-message preview).
func (d *Derived) mayMatch(p *session.Part) bool {
	if d == nil {
		return false
	}
	if p.Kind == session.PartToolCall {
		return len(p.Input) >= d.shorter
	}
	return len(p.Text) >= d.shorter
}

// part filters one part of a copy; i is the stored part it is a copy of,
// in the message of Seq seq.
func (f *filterer) part(p *session.Part, seq uint64, i int, found []secrets.Finding, t *tally) bool {
	var repl map[int]string
	var notes []session.Filtered
	var spans []span
	var noted []keptSpan
	p.EachUnit(func(u session.Unit) {
		if withheldUnit(p, u.Key) {
			return // a placeholder already: a call's input of a denied file
		}
		ok := false // the places are the kept ones
		if f.kept != nil {
			spans, ok = f.kept.of(seq, i, u.Key, u.Text, spans[:0])
		}
		if !ok {
			var into *[]keptSpan
			if f.notes != nil {
				into = &noted
			}
			spans = f.derived.matchNoting(u.Text, spans[:0], into, keptSpan{seq: seq, part: int32(i), key: int32(u.Key)})
		}
		for _, fd := range found {
			if fd.Part == i && fd.Key == u.Key && 0 <= fd.Start && fd.Start < fd.End && fd.End <= len(u.Text) {
				spans = append(spans, span{start: fd.Start, end: fd.End, kind: "secret", rule: fd.Rule,
					placeholder: secrets.Placeholder(fd.Rule, f.label)})
			}
		}
		if len(spans) == 0 {
			return
		}
		spans = merge(spans, u.Text)
		text, ns := replace(u.Text, spans, u.Key)
		for _, sp := range spans {
			t.spans.count(sp)
		}
		notes = append(notes, ns...)
		if u.Key < 0 {
			p.Text = text
			return
		}
		if repl == nil {
			repl = map[int]string{}
		}
		repl[u.Key] = text
	})
	if len(noted) > 0 {
		f.notes.add(noted)
	}
	if len(notes) == 0 {
		return false
	}
	if repl != nil {
		p.Input = session.ReplaceUnits(p.Input, repl)
	}
	p.Filtered = append(p.Filtered[:len(p.Filtered):len(p.Filtered)], notes...)
	return true
}

// withheldUnit reports whether the path pass replaced unit key of p whole
// (tally.withholdInput).
func withheldUnit(p *session.Part, key int) bool {
	for _, f := range p.Filtered {
		if f.Key == key && f.Kind == "path" {
			return true
		}
	}
	return false
}

// merge sorts spans and joins those that overlap (the first one's
// placeholder covers both), and those of one kind and source with only
// white space between them (lines of one file quoted together: one
// placeholder).
func merge(spans []span, s string) []span {
	slices.SortFunc(spans, func(a, b span) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end),
			cmp.Compare(b.kind, a.kind), strings.Compare(a.path, b.path), strings.Compare(a.rule, b.rule))
	})
	w := 0
	for _, sp := range spans {
		if w > 0 {
			last := &spans[w-1]
			if sp.start < last.end {
				last.end = max(last.end, sp.end)
				continue
			}
			if sp.kind == last.kind && sp.path == last.path && sp.rule == last.rule && strings.TrimSpace(s[last.end:sp.start]) == "" {
				last.end = sp.end
				continue
			}
		}
		spans[w] = sp
		w++
	}
	return spans[:w]
}

// replace returns s with each span (sorted, apart) replaced by its
// placeholder, and notes saying where each placeholder is.
func replace(s string, spans []span, key int) (string, []session.Filtered) {
	var b strings.Builder
	n := len(s)
	for _, sp := range spans {
		n += len(sp.placeholder) - (sp.end - sp.start)
	}
	b.Grow(n)
	notes := make([]session.Filtered, len(spans))
	at := 0
	for i, sp := range spans {
		b.WriteString(s[at:sp.start])
		start := b.Len()
		b.WriteString(sp.placeholder)
		notes[i] = session.Filtered{Kind: sp.kind, Path: sp.path, Rule: sp.rule, Key: key,
			Start: start, End: b.Len(), StoredStart: sp.start, StoredEnd: sp.end}
		at = sp.end
	}
	b.WriteString(s[at:])
	return b.String(), notes
}

// partsOf maps each part of sent to the part of stored it is a copy of (-1
// for placeholders). A copy the path pass did not touch is the same part
// for part; otherwise the parts it kept are the stored ones in order, and
// equal to them.
func partsOf(stored, sent []session.Part) []int {
	return partsOfInto(make([]int, len(sent)), stored, sent)
}

// partsOfInto is partsOf into of, which has room for every sent part: a
// caller with few parts keeps it on its stack (made for every message it
// looked into, it was 700k allocations of the TUI's first count at a
// million messages).
func partsOfInto(of []int, stored, sent []session.Part) []int {
	of = of[:len(sent)]
	if len(stored) == len(sent) && !slices.ContainsFunc(sent, func(p session.Part) bool { return p.Redacted }) {
		for j := range of {
			of[j] = j
		}
		return of
	}
	i := 0
	for j := range sent {
		of[j] = -1
		if sent[j].Redacted {
			continue
		}
		for i < len(stored) && !samePart(&stored[i], &sent[j]) {
			i++
		}
		if i < len(stored) {
			of[j] = i
			i++
		}
	}
	return of
}

// samePart reports whether b is a copy of a; a copy with placeholders
// inside it (Filtered) has other text, and is told by the rest.
func samePart(a, b *session.Part) bool {
	if a.Kind != b.Kind || a.SourcePath != b.SourcePath || a.CallID != b.CallID || a.Name != b.Name {
		return false
	}
	return len(b.Filtered) > 0 || a.Text == b.Text && string(a.Input) == string(b.Input)
}

func countPlaceholders(parts []session.Part) int {
	n := 0
	for i := range parts {
		if parts[i].Redacted || len(parts[i].Filtered) > 0 {
			n++
		}
	}
	return n
}
