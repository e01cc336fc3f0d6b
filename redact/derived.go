package redact

import (
	"cmp"
	"slices"
	"strings"
	"sync"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// Derived is what one tier's redaction withholds of a session, as
// fingerprints to look for in everything else that is sent, each with the
// path it came from. It is read-only once built and safe for concurrent use.
type Derived struct {
	label   string
	fps     []fingerprint
	win     windows // finds them (windows.go)
	shorter int     // the shortest fingerprint's length
}

type fingerprint struct {
	text string
	path string
	// placeholder is the path's placeholder, shared by the path's
	// fingerprints.
	placeholder string
}

// Len is how many fingerprints d holds.
func (d *Derived) Len() int {
	if d == nil {
		return 0
	}
	return len(d.fps)
}

// Fingerprints returns d's fingerprints and the path of each.
func (d *Derived) Fingerprints() (texts, paths []string) {
	if d == nil {
		return nil, nil
	}
	for _, f := range d.fps {
		texts, paths = append(texts, f.text), append(paths, f.path)
	}
	return texts, paths
}

// candidates gathers fingerprints of withheld content, each kept with the
// path of its first appearance (order: where the content is in the session,
// so the result does not depend on how the work was shared out), and
// whether content the tier may read has it too.
type candidates struct {
	m    map[string]*candidate
	lens [maxFingerprint + 1]bool // the lengths of the candidates: most pieces have none of them
	// drop says build may drop them once it has taken the fingerprints:
	// nothing is gathered after (a Stream).
	drop bool
}

type candidate struct {
	path  string
	order int64
	also  bool // in content the tier may read: not distinctive
}

// add adds text's fingerprints, and reports whether any was new.
func (c *candidates) add(text, path string, order int64) bool {
	if c.m == nil {
		c.m = map[string]*candidate{}
	}
	added := false
	eachFingerprint(text, func(fp string) {
		if old, ok := c.m[fp]; !ok {
			c.m[fp] = &candidate{path: path, order: order}
			c.lens[len(fp)] = true
			added = true
		} else if order < old.order {
			old.path, old.order = path, order
		}
	})
	return added
}

// check marks the candidates that content the tier may read has too: the
// texts of each of groups, on a core of its own.
func (c *candidates) check(groups [][]string) {
	if len(c.m) == 0 {
		return
	}
	found := make([][]*candidate, len(groups))
	var wg sync.WaitGroup
	for i, texts := range groups {
		wg.Go(func() {
			for _, a := range texts {
				eachCandidate(a, func(piece string) {
					if len(piece) <= maxFingerprint && c.lens[len(piece)] {
						if cand, ok := c.m[piece]; ok && !cand.also {
							found[i] = append(found[i], cand)
						}
					}
				})
			}
		})
	}
	wg.Wait()
	for _, f := range found {
		for _, cand := range f {
			cand.also = true
		}
	}
}

// withheldText is a piece of withheld content of path; order is where it
// is in the session (its message's place, then its part's).
type withheldText struct {
	text, path string
	order      int64
}

// build turns candidates, less those also in content the tier may read,
// into the matcher, and drops them if c.drop says so. No fingerprint: nil,
// and nothing to look for.
func build(c *candidates, label string) *Derived {
	fps := make([]fingerprint, 0, len(c.m))
	type ordered struct {
		fingerprint
		order int64
	}
	var all []ordered
	for text, cand := range c.m {
		if !cand.also {
			all = append(all, ordered{fingerprint{text: text, path: cand.path}, cand.order})
		}
	}
	if c.drop {
		// Gone before the index is made, not after: the two were the
		// peak of a first preview's memory at 1M messages.
		*c = candidates{}
	}
	if len(all) == 0 {
		return nil
	}
	slices.SortFunc(all, func(a, b ordered) int {
		return cmp.Or(cmp.Compare(a.order, b.order), strings.Compare(a.text, b.text))
	})
	places := map[string]string{}
	for _, o := range all {
		ph, ok := places[o.path]
		if !ok {
			ph = Placeholder(o.path, label)
			places[o.path] = ph
		}
		o.placeholder = ph
		fps = append(fps, o.fingerprint)
	}
	return newDerived(fps, label)
}

func newDerived(fps []fingerprint, label string) *Derived {
	d := &Derived{label: label, fps: fps, win: newWindows(fps), shorter: len(fps[0].text)}
	for _, f := range fps {
		d.shorter = min(d.shorter, len(f.text))
	}
	return d
}

// span is a piece of a unit to replace, and its placeholder.
type span struct {
	start, end  int
	kind        string // "derived" or "secret"
	path, rule  string
	placeholder string
}

// match appends to spans every occurrence in s of a fingerprint.
func (d *Derived) match(s string, spans []span) []span {
	if d == nil || len(s) < d.shorter {
		return spans
	}
	d.win.each(s, d.fps, func(start int, i int32) bool {
		f := &d.fps[i]
		spans = append(spans, span{start: start, end: start + len(f.text), kind: "derived", path: f.path, placeholder: f.placeholder})
		return true
	})
	return spans
}

// DerivedBuilder gathers a tier's fingerprints from a session read in
// pieces (the TUI streams long sessions from the store, and extends what it
// gathered as a session grows): Add each piece, in order; when Stale says
// so, Recheck the session from its start; then Done. Add checks the content
// the tier may read in its piece against every fingerprint gathered so far,
// but a fingerprint first met in a later piece was not checked against the
// earlier ones: Recheck does that.
type DerivedBuilder struct {
	model string
	p     *policy.Policy
	label string
	on    bool
	cands candidates
	order int64
	stale bool
	// memo, when a Stream gathers, decides each path once for all the
	// pieces and for the Stream's redaction after them. The TUI's
	// builders live as long as the program, while files may change, so
	// they decide afresh for each piece.
	memo *memo
	// late leaves every check to Recheck: a Stream reads the whole
	// session again anyway once a fingerprint turns up after its first
	// batch, so checking each batch as it is added would check it twice.
	late bool
	l    layout // how each piece is shared out across cores
}

// NewDerivedBuilder starts gathering for model's tier. For a tier without
// derived = "redact" it gathers nothing and Done returns nil.
func NewDerivedBuilder(model string, p *policy.Policy) *DerivedBuilder {
	tier, _ := p.TierFor(model)
	b := &DerivedBuilder{model: model, p: p, on: tier.RedactsDerived(), l: defaultLayout}
	if tier != nil {
		b.label = tier.Label
	}
	return b
}

// Add gathers from msgs, the next messages of the session.
func (b *DerivedBuilder) Add(msgs []session.Message) {
	if !b.on || len(msgs) == 0 {
		return
	}
	gs := gatherAll(msgs, b.model, b.p, b.memo, b.l)
	added := false
	for _, g := range gs {
		for _, w := range g.withheld {
			added = b.cands.add(w.text, w.path, b.order+w.order) || added
		}
	}
	b.stale = b.stale || added && (b.order > 0 || b.late)
	if !b.late {
		b.cands.check(allowedOf(gs))
	}
	b.order += int64(len(msgs)) << 16
}

// CheckLate, on, leaves the check of each piece's readable content to
// Recheck, for pieces that are a whole session from its start: once a
// fingerprint turns up after the first, every piece is rechecked anyway,
// so checking each as it is added checks it twice (the TUI's first
// gathering at 1M messages: 2 s of CPU). With it on, any fingerprint
// makes the builder stale. Off, for pieces a session grew by, Add checks
// each.
func (b *DerivedBuilder) CheckLate(on bool) { b.late = on }

// Stale reports whether fingerprints were found after content they were
// not checked against: the pieces added so far must go through Recheck.
func (b *DerivedBuilder) Stale() bool { return b.stale }

// Recheck checks msgs, pieces of the session up to the last one added, read
// again from the start, against every fingerprint gathered. Once all of
// them have been through it, the builder is no longer stale.
func (b *DerivedBuilder) Recheck(msgs []session.Message, last bool) {
	if !b.on || len(msgs) == 0 {
		return
	}
	b.cands.check(allowedOf(gatherAll(msgs, b.model, b.p, b.memo, b.l)))
	if last {
		b.stale = false
	}
}

// Done returns the fingerprints gathered: nil when there are none.
func (b *DerivedBuilder) Done() *Derived {
	if !b.on {
		return nil
	}
	return build(&b.cands, b.label)
}

// PrepareDerived gathers the fingerprints of model's tier from a whole
// session at once.
func PrepareDerived(msgs []session.Message, model string, p *policy.Policy) *Derived {
	b := NewDerivedBuilder(model, p)
	b.Add(msgs)
	return b.Done()
}
