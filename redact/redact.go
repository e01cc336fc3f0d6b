package redact

import (
	"slices"
	"strings"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/secrets"
	"github.com/scrim-dev/scrim/session"
)

// Placeholder is the exact text that replaces content from a denied path.
func Placeholder(path, tierLabel string) string {
	return "[Content from " + path + " filtered \u2014 trust tier \"" + tierLabel + "\" does not have read access]"
}

// Withheld is the exact text that replaces content of unknown source for a
// tier with unknown_source = "withhold".
func Withheld(tierLabel string) string {
	return "[Content of unknown source withheld \u2014 trust tier \"" + tierLabel + "\" accepts only content whose source is known]"
}

// DeniedPath is a path the tier may not read and the rule that denied it.
type DeniedPath struct {
	Path    string `json:"path"`
	Pattern string `json:"pattern,omitempty"` // deny pattern as written; "" when no read pattern matched
	Line    int    `json:"line,omitempty"`    // line of Pattern in the policy file, or in File
	File    string `json:"file,omitempty"`    // the team file (deny_files) that denied it
	Reason  string `json:"reason"`
}

// Tier names the tier a report is for.
type Tier struct {
	Name  string `json:"name"`
	Label string `json:"label"`
}

// Report says what History did.
type Report struct {
	Tier             Tier         `json:"tier"`
	Messages         int          `json:"sent"`             // messages in the result
	RedactedMessages int          `json:"redactedMessages"` // messages with at least one placeholder
	RedactedParts    int          `json:"redactedParts"`    // stored parts replaced
	UnknownSource    int          `json:"unknownSource"`    // messages whose source is not (fully) known, sent unchecked
	Withheld         int          `json:"withheld"`         // messages of unknown source withheld (unknown_source = "withhold")
	DeniedPaths      []DeniedPath `json:"deniedPaths"`      // in order of first appearance
	Events           int          `json:"events"`           // event messages left out
	// Derived counts the spans replaced because they repeat content of a
	// denied path (derived = "redact"), DerivedFrom by path; Secrets the
	// credentials replaced (secrets = "redact"), SecretRules by rule.
	Derived     int         `json:"derived"`
	DerivedFrom []PathCount `json:"derivedFrom"`
	Secrets     int         `json:"secrets"`
	SecretRules []RuleCount `json:"secretRules"`
	// Related are the sessions, by ID, whose withheld content the derived
	// spans were also looked for from: the session's subagents', whose
	// answers it holds, and its parents', whose words its prompts repeat
	// (tally.Scope). Set by the commands that read a stored session; none
	// for History.
	Related []string `json:"related,omitempty"`
}

// PathCount is how many spans repeated content of a denied path.
type PathCount struct {
	Path  string `json:"path"`
	Spans int    `json:"spans"`
}

// RuleCount is how many credentials a gitleaks rule found.
type RuleCount struct {
	Rule  string `json:"rule"`
	Spans int    `json:"spans"`
}

// History returns what model may be sent of msgs, and a report. The result is
// a new slice; nothing reachable from msgs is written. Unchanged messages share
// the input's strings (immutable) but have their own Parts, Input and
// SourcePaths storage. Events are dropped: they are never provider content.
//
// A part whose SourcePath the model's tier may not read becomes a placeholder
// (consecutive parts of one denied path collapse into one). A message whose
// sourcePaths are not attributed per part is replaced whole, one placeholder
// per denied path, if any of its paths is denied. Each distinct path is
// decided once per call.
//
// For a tier with derived = "redact", spans anywhere else that repeat
// withheld content (see Derived) become that path's placeholder; with
// secrets = "redact", credentials anywhere become a secret placeholder.
// Both are replaced inside a part's text, or inside the strings of a tool
// call's input, and noted in the part's Filtered. History takes the
// fingerprints from msgs and scans them for credentials itself; HistoryWith
// takes both from a Context, for a caller that redacts a session in pieces
// or keeps findings.
//
// A long history is cut into one chunk per core, and each step runs on all
// chunks at once. First each chunk notes its paths and counts its events.
// Then, once the chunks' paths are merged, the cores decide the distinct
// paths, a span at a time. Next they copy the messages a block at a time,
// fixing up each block's tagged messages while it is still in cache. Last,
// for a tier that redacts derived content or credentials, they look for
// those in every block.
func History(msgs []session.Message, model string, p *policy.Policy) ([]session.Message, Report) {
	out, rep, _ := history(msgs, model, p, Context{}, defaultLayout, false)
	return out, rep
}

// Context is what redacting a piece of a session needs from beyond it.
type Context struct {
	// Derived holds the fingerprints of what the tier withholds of the
	// whole session (PrepareDerived, DerivedBuilder); nil takes them from
	// the messages being redacted. It must be built for the same tier.
	Derived *Derived
	// Findings returns the credentials found in a message (secrets.Lookup
	// keeps them in the store); nil scans each message that a tier with
	// secrets = "redact" needs.
	Findings func(m *session.Message) []secrets.Finding

	// Memo, if not nil, holds the tier's decisions of the session's
	// paths made by other redactions (the other steps of a count), and
	// is told this one's.
	Memo *Memo
	// For a Stream's batches: that Derived is the whole session's even
	// when nil (no fingerprint).
	whole bool
	// For a Stream's batches: where Derived's fingerprints are, kept from
	// an earlier search, or the notes to make of where they are found.
	kept  *keptMatches
	notes *matchNotes
}

// HistoryWith is History with what ctx supplies.
func HistoryWith(msgs []session.Message, model string, p *policy.Policy, ctx Context) ([]session.Message, Report) {
	out, rep, _ := history(msgs, model, p, ctx, defaultLayout, false)
	return out, rep
}

// history redacts msgs. gatherOnly stops it once paths are redacted, to
// gather what derived redaction needs (DerivedBuilder).
func history(msgs []session.Message, model string, p *policy.Policy, ctx Context, l layout, gatherOnly bool) ([]session.Message, Report, []*gathered) {
	tier, _ := p.TierFor(model)
	dec := newDecisionsWith(p, tier, ctx.Memo)
	gathering := gatherOnly || tier.RedactsDerived() && ctx.Derived == nil && !ctx.whole
	chunks := l.split(msgs)
	for _, c := range chunks {
		c.withhold = tier.WithholdsUnknown()
		if gathering {
			c.gather = &gathered{}
		}
	}
	each(chunks, (*chunk).scan)
	n := 0
	for _, c := range chunks {
		c.at = n
		n += len(c.in) - c.events
		dec.merge(c)
	}
	dec.start()
	each(chunks, func(c *chunk) {
		c.globalize()
		dec.decideSpans()
	})
	dec.remember()
	out := make([]session.Message, n)
	bs := newBlocks(chunks)
	each(chunks, func(own *chunk) {
		for r, ok := bs.take(); ok; r, ok = bs.take() {
			c := chunks[r.c]
			c.copy(out, int(r.b))
			c.fixUp(out, int(r.b), dec, &own.tally)
		}
	})
	var gs []*gathered
	for _, c := range chunks {
		if c.gather != nil {
			gs = append(gs, c.gather)
		}
	}
	if gatherOnly {
		return nil, Report{}, gs
	}
	if tier.RedactsDerived() || tier.RedactsSecrets() {
		f := &filterer{label: tier.Label, secrets: tier.RedactsSecrets(), findings: ctx.Findings}
		if tier.RedactsDerived() {
			f.derived = ctx.Derived
			if f.derived == nil && !ctx.whole {
				f.derived = derivedOf(gs, tier.Label)
			}
			if f.derived != nil {
				f.kept, f.notes = ctx.kept, ctx.notes
				if f.notes != nil {
					f.notes.paths = f.derived.paths
				}
			}
		}
		if f.derived != nil || f.secrets {
			bs := newBlocks(chunks)
			each(chunks, func(own *chunk) {
				for r, ok := bs.take(); ok; r, ok = bs.take() {
					chunks[r.c].filter(out, int(r.b), f, &own.tally)
				}
			})
		}
	}
	rep := Report{Tier: Tier{Name: tier.Name, Label: tier.Label}, Messages: n, DeniedPaths: dec.denied()}
	var st spanTally
	for _, c := range chunks {
		rep.RedactedMessages += c.redactedMessages
		rep.RedactedParts += c.redactedParts
		rep.UnknownSource += c.unknownSource - c.unknownWithheld
		rep.Withheld += c.withheld
		rep.Events += c.events
		st.add(&c.spans)
	}
	st.report(&rep)
	return out, rep, gs
}

// unattributedDenied reports whether m lists a denied path in sourcePaths that
// none of its parts carries: content from it cannot be told apart, so the
// message must go whole (fail closed). meta holds the paths' decision indexes.
func (d *decisions) unattributedDenied(m *session.Message, meta []int32) bool {
	for i, path := range m.Meta.SourcePaths {
		if !d.allowed(meta[i]) && !carried(m.Parts, path) {
			return true
		}
	}
	return false
}

func carried(parts []session.Part, path string) bool {
	for i := range parts {
		if parts[i].SourcePath == path {
			return true
		}
	}
	return false
}

// redactParts replaces, in place in the copy, each part from a denied path.
// idx holds the parts' decision indexes.
func (t *tally) redactParts(d *decisions, parts []session.Part, idx []int32, order int64) []session.Part {
	w, redacted := 0, 0
	for i := range parts {
		pt := parts[i]
		if d.allowed(idx[i]) {
			if t.gather != nil && idx[i] >= 0 && !t.gather.unknown && pt.Kind != session.PartToolCall {
				t.gather.allowed = append(t.gather.allowed, allowedText{pt.Text, t.gather.seq})
			}
			parts[w] = pt
			w++
			continue
		}
		if pt.Kind == session.PartToolCall {
			// A call that writes the denied file: its input holds the
			// file's content (what an edit replaces, what it writes). The
			// call stays, so that its result still answers it.
			var ok bool
			if parts[w], ok = t.withholdInput(d, pt, idx[i], order+int64(i)); ok {
				redacted++
			}
			w++
			continue
		}
		if t.gather != nil {
			t.gather.withheld = append(t.gather.withheld, withheldText{pt.Text, pt.SourcePath, order + int64(i)})
		}
		redacted++
		if w > 0 && parts[w-1].Redacted && parts[w-1].SourcePath == pt.SourcePath {
			continue // consecutive parts of one denied file: one placeholder
		}
		parts[w] = d.placeholder(pt.Kind, idx[i])
		w++
	}
	if redacted > 0 {
		t.redactedParts += redacted
		t.redactedMessages++
		clear(parts[w:])
	}
	return parts[:w:w]
}

// redactWhole handles the copy m of a message attributed as a whole: if any
// of its paths is denied, all of its content goes, one placeholder per denied
// path in order (fail closed). Otherwise it is kept. meta and parts hold the
// decision indexes of its sourcePaths and of its parts' paths.
func (t *tally) redactWhole(d *decisions, m *session.Message, meta, parts []int32, order int64) []session.Part {
	var denied []int32
	for _, ks := range [2][]int32{meta, parts} {
		for _, k := range ks {
			if !d.allowed(k) && !slices.Contains(denied, k) {
				denied = append(denied, k)
			}
		}
	}
	if t.gather != nil {
		t.gather.whole(d, m, denied, order)
	}
	if len(denied) == 0 {
		return m.Parts
	}
	kind := session.PartText
	for i := range m.Parts {
		if m.Parts[i].Kind != session.PartToolCall {
			kind = m.Parts[i].Kind
			break
		}
	}
	out := make([]session.Part, len(denied))
	for i, k := range denied {
		out[i] = d.placeholder(kind, k)
	}
	t.redactedParts += len(m.Parts)
	t.redactedMessages++
	return out
}

// withholdInput replaces, in the copy p of a tool call that writes the
// denied file of decision index k, each string of its input by the file's
// placeholder: its keys stay, and the value that names the file (its
// placeholder names it too), so that the call is still the same call, in
// valid JSON. It reports whether anything was replaced; what was is
// withheld content for derived redaction, met at order.
func (t *tally) withholdInput(d *decisions, p session.Part, k int32, order int64) (session.Part, bool) {
	path, ph := d.set.paths[k], d.verdicts[k].denied.placeholder
	var repl map[int]string
	var notes []session.Filtered
	if p.Text != "" { // a call has none, as the agents write them
		if t.gather != nil {
			t.gather.withheld = append(t.gather.withheld, withheldText{p.Text, path, order})
		}
		notes = append(notes, session.Filtered{Kind: "path", Path: path, Key: -1, End: len(ph), StoredEnd: len(p.Text)})
		p.Text = ph
	}
	p.EachUnit(func(u session.Unit) {
		if u.Text == "" || session.IsInputKey(p.Input, u) || namesFile(u.Text, path) {
			return
		}
		if t.gather != nil {
			t.gather.withheld = append(t.gather.withheld, withheldText{u.Text, path, order})
		}
		if repl == nil {
			repl = map[int]string{}
		}
		repl[u.Key] = ph
		notes = append(notes, session.Filtered{Kind: "path", Path: path, Key: u.Key, End: len(ph), StoredEnd: len(u.Text)})
	})
	if notes == nil {
		return p, false
	}
	p.Input = session.ReplaceUnits(p.Input, repl)
	p.Filtered = notes
	return p, true
}

// namesFile reports whether s, a string of a tool call's input or a
// fingerprint, is the path of the file at the canonical path: itself, or a
// relative path that ends it. It is asked of every fingerprint a gathering
// cuts, so it allocates nothing and most strings fail its first compare.
func namesFile(s, path string) bool {
	if s == path {
		return true
	}
	s = strings.TrimPrefix(s, "./")
	return s != "" && s[0] != '/' && len(s) < len(path) && path[len(path)-len(s)-1] == '/' && strings.HasSuffix(path, s)
}
