package redact

import (
	"cmp"
	"slices"
	"strings"
	"unsafe"

	"github.com/cespare/xxhash/v2"
	"github.com/coregx/ahocorasick"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// Derived is what one tier's redaction withholds of a session, as
// fingerprints to look for in everything else that is sent, each with the
// path it came from. It is read-only once built and safe for concurrent use.
type Derived struct {
	label string
	fps   []fingerprint
	// The matcher looks for anchors: each fingerprint's first anchorLen
	// bytes (all of it, when shorter). An anchor found is checked against
	// the fingerprints that start with it, longest first. Anchors keep the
	// automaton small however long the lines are: its size is bounded by
	// anchorLen bytes a fingerprint.
	ac      *ahocorasick.Automaton
	buckets [][]int32 // anchor → fingerprints, longest first
	shorter int       // the shortest fingerprint's length
}

const anchorLen = 16

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
// so the result does not depend on how the work was shared out).
type candidates struct {
	m map[string]candidate
}

type candidate struct {
	path  string
	order int64
}

func (c *candidates) add(text, path string, order int64) {
	if c.m == nil {
		c.m = map[string]candidate{}
	}
	eachFingerprint(text, func(fp string) {
		if old, ok := c.m[fp]; !ok || order < old.order {
			c.m[fp] = candidate{path, order}
		}
	})
}

// withheldText is a piece of withheld content of path; order is where it
// is in the session (its message's place, then its part's).
type withheldText struct {
	text, path string
	order      int64
}

// allowedSet holds the hashes of the fingerprints of content a tier may
// read: hashes, so that streaming a session through a builder does not keep
// its text alive.
type allowedSet map[uint64]struct{}

func (a allowedSet) add(text string) {
	eachFingerprint(text, func(fp string) { a[xxhash.Sum64String(fp)] = struct{}{} })
}

// build turns candidates, less those also in content the tier may read,
// into the matcher. No fingerprint: nil, and nothing to look for.
func build(c *candidates, allowed func(string) bool, label string) *Derived {
	fps := make([]fingerprint, 0, len(c.m))
	type ordered struct {
		fingerprint
		order int64
	}
	var all []ordered
	for text, cand := range c.m {
		if !allowed(text) {
			all = append(all, ordered{fingerprint{text: text, path: cand.path}, cand.order})
		}
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
	d := &Derived{label: label, fps: fps, shorter: len(fps[0].text)}
	index := map[string]int32{}
	var anchors []string
	for i, f := range fps {
		a := f.text[:min(anchorLen, len(f.text))]
		k, ok := index[a]
		if !ok {
			k = int32(len(anchors))
			index[a] = k
			anchors = append(anchors, a)
			d.buckets = append(d.buckets, nil)
		}
		d.buckets[k] = append(d.buckets[k], int32(i))
		d.shorter = min(d.shorter, len(f.text))
	}
	for _, b := range d.buckets {
		slices.SortFunc(b, func(x, y int32) int {
			return cmp.Or(cmp.Compare(len(fps[y].text), len(fps[x].text)), cmp.Compare(x, y))
		})
	}
	ac, err := ahocorasick.NewBuilder().AddStrings(anchors).Build()
	if err != nil {
		// Only an empty pattern list fails, and there is at least one.
		panic("redact: build matcher: " + err.Error())
	}
	d.ac = ac
	return d
}

// span is a piece of a unit to replace, and its placeholder.
type span struct {
	start, end  int
	kind        string // "derived" or "secret"
	path, rule  string
	placeholder string
}

// match appends to spans every occurrence in s of a fingerprint (the
// longest, where several start at one place).
func (d *Derived) match(s string, spans []span) []span {
	if d == nil || len(s) < d.shorter {
		return spans
	}
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	for _, m := range d.ac.FindAllOverlapping(b) {
		for _, i := range d.buckets[m.PatternID] {
			f := &d.fps[i]
			if strings.HasPrefix(s[m.Start:], f.text) {
				spans = append(spans, span{start: m.Start, end: m.Start + len(f.text), kind: "derived", path: f.path, placeholder: f.placeholder})
				break
			}
		}
	}
	return spans
}

// DerivedBuilder gathers a tier's fingerprints from a session read in
// pieces (the TUI streams long sessions from the store): Add each piece, in
// order, then Done.
type DerivedBuilder struct {
	model   string
	p       *policy.Policy
	label   string
	on      bool
	cands   candidates
	allowed allowedSet
	order   int64
}

// NewDerivedBuilder starts gathering for model's tier. For a tier without
// derived = "redact" it gathers nothing and Done returns nil.
func NewDerivedBuilder(model string, p *policy.Policy) *DerivedBuilder {
	tier, _ := p.TierFor(model)
	b := &DerivedBuilder{model: model, p: p, on: tier.RedactsDerived(), allowed: allowedSet{}}
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
	g := gather(msgs, b.model, b.p, defaultLayout)
	for _, w := range g.withheld {
		b.cands.add(w.text, w.path, b.order+w.order)
	}
	for _, a := range g.allowed {
		b.allowed.add(a)
	}
	b.order += int64(len(msgs)) << 16
}

// Done returns the fingerprints gathered: nil when there are none.
func (b *DerivedBuilder) Done() *Derived {
	if !b.on {
		return nil
	}
	return build(&b.cands, func(fp string) bool {
		_, ok := b.allowed[xxhash.Sum64String(fp)]
		return ok
	}, b.label)
}

// PrepareDerived gathers the fingerprints of model's tier from a whole
// session at once.
func PrepareDerived(msgs []session.Message, model string, p *policy.Policy) *Derived {
	b := NewDerivedBuilder(model, p)
	b.Add(msgs)
	return b.Done()
}
