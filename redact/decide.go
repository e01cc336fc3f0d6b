package redact

import (
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// spanSize is how many paths a deciding goroutine takes at a time: enough
// to make taking them cheap, few enough that the cores finish together.
const spanSize = 64

// decisions holds one History call's answers: every distinct path of the
// history, decided exactly once. Deciding resolves symlinks on disk, so it is
// by far the most expensive step per path; paths are independent, so every
// core decides spans of them until none is left.
type decisions struct {
	p        *policy.Policy
	tier     *policy.Tier
	withheld string // the unknown-source placeholder, built once
	batch    *policy.Batch
	set      pathSet      // every distinct path of the history, once the chunks are merged
	verdicts []verdict    // sized when deciding starts
	next     atomic.Int64 // the next span to take
	// memo, for a session redacted in batches, holds what earlier
	// batches decided; todo then lists the indexes of the paths it does
	// not know, the only ones decided.
	memo *Memo
	todo []int32
}

// Memo keeps the decisions of one tier across redactions of one session,
// so that each distinct path is decided once for the whole session, as
// History decides it once for a whole slice: a Stream's batches, a count's
// steps (Context.Memo). The policy's batch is kept too: folders resolved for
// one redaction are resolved for the next. Safe for concurrent use (the
// steps of a count run on every core); a path two redactions decide at once
// is decided twice, the same way. The zero Memo is empty.
type Memo struct {
	mu       sync.RWMutex
	batch    *policy.Batch
	verdicts map[string]verdict
	// allowed, once compact, holds the allowed paths by a 128-bit keyed
	// hash of each (key) in place of their entries in verdicts.
	allowed map[[2]uint64]struct{}
	seeds   [2]maphash.Seed
}

// lookup returns what m decided of path, if it did.
func (m *Memo) lookup(path string) (verdict, bool) {
	if v, ok := m.verdicts[path]; ok {
		return v, true
	}
	if m.allowed != nil {
		if _, ok := m.allowed[m.key(path)]; ok {
			return verdict{allowed: true}, true
		}
	}
	return verdict{}, false
}

func (m *Memo) key(path string) [2]uint64 {
	return [2]uint64{maphash.String(m.seeds[0], path), maphash.String(m.seeds[1], path)}
}

// compact lets go of the allowed paths' texts once nothing encodes the
// memo's decisions again (Stream.Ready: a kept gathering names every path
// it rests on), keeping a 128-bit keyed hash of each. On the 20k benchmark
// session its 5,600 paths, nearly all allowed, were a map and their texts
// the preview held to its end beside its stream. A path taken for an
// allowed one by its hash alone would be sent as allowed: with 128 bits
// under seeds made for this memo, the odds are under 2^-80 for a million
// paths looked up against a million.
func (m *Memo) compact() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.verdicts) == 0 {
		return
	}
	if m.allowed == nil {
		m.allowed = map[[2]uint64]struct{}{}
		m.seeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}
	}
	kept := map[string]verdict{}
	for p, v := range m.verdicts {
		if v.allowed {
			m.allowed[m.key(p)] = struct{}{}
		} else {
			kept[p] = v
		}
	}
	m.verdicts = kept
}

// compacted reports whether compact let go of paths' texts.
func (m *Memo) compacted() bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.allowed != nil
}

// verdict is a path's decision: allowed, or denied, with what the report
// says of it. Most paths are allowed and need nothing more: a verdict that
// kept the whole policy.Decision (five strings, the reason built for every
// path) was 1.1 MB of the memo on the 20k benchmark session's 5,600 paths,
// a sixth of what its preview with derived = "redact" holds beside show's.
type verdict struct {
	allowed bool
	denied  *denial // nil when allowed
}

// denial is a denied path's decision and its placeholder text (built once,
// shared by every part it replaces).
type denial struct {
	placeholder string
	decision    policy.Decision
}

func newDecisions(p *policy.Policy, t *policy.Tier) *decisions {
	return newDecisionsWith(p, t, nil)
}

// newDecisionsWith is newDecisions that asks m first, if not nil, and
// tells it what it decides.
func newDecisionsWith(p *policy.Policy, t *policy.Tier, m *Memo) *decisions {
	d := &decisions{p: p, tier: t, memo: m}
	if m != nil {
		m.mu.Lock()
		if m.batch == nil {
			m.batch, m.verdicts = p.NewBatch(t), map[string]verdict{}
		}
		d.batch = m.batch
		m.mu.Unlock()
	} else {
		d.batch = p.NewBatch(t)
	}
	if t != nil {
		d.withheld = Withheld(t.Label)
	}
	return d
}

// merge adds a noted chunk's paths, in order, to the call's, and gives the
// chunk the map from its indexes to the call's. Chunks must be merged in
// order, so that paths stay in order of first appearance.
func (d *decisions) merge(c *chunk) {
	if len(d.set.paths) == 0 {
		d.set = c.set // the first chunk with paths: its indexes are the call's
		return
	}
	c.global = make([]int32, len(c.set.paths))
	for i, path := range c.set.paths {
		c.global[i] = d.set.add(path)
	}
}

// decideSpans decides spans of paths until none is left. Every goroutine of
// the call runs it, once every chunk is merged and start has been called.
func (d *decisions) decideSpans() {
	n := len(d.set.paths)
	if d.memo != nil {
		n = len(d.todo)
	}
	for {
		lo := int(d.next.Add(1)-1) * spanSize
		if lo >= n {
			return
		}
		for i := lo; i < min(lo+spanSize, n); i++ {
			k := i
			if d.memo != nil {
				k = int(d.todo[i])
			}
			d.verdicts[k] = d.decide(d.set.paths[k])
		}
	}
}

// start readies the verdicts once every chunk is merged, takes those the
// memo knows, and tells the batch which paths are coming.
func (d *decisions) start() {
	d.verdicts = make([]verdict, len(d.set.paths))
	if d.memo == nil {
		d.batch.Expect(d.set.paths)
		return
	}
	var expect []string
	d.memo.mu.RLock()
	defer d.memo.mu.RUnlock()
	for i, path := range d.set.paths {
		if v, ok := d.memo.lookup(path); ok {
			d.verdicts[i] = v
			continue
		}
		d.todo = append(d.todo, int32(i))
		expect = append(expect, path)
	}
	d.batch.Expect(expect)
}

// remember tells the memo, if any, what was decided, once every span is.
func (d *decisions) remember() {
	if d.memo == nil {
		return
	}
	d.memo.mu.Lock()
	defer d.memo.mu.Unlock()
	for _, k := range d.todo {
		d.memo.verdicts[d.set.paths[k]] = d.verdicts[k]
	}
}

// allowed reports whether the path with index k may be read; -1, no path,
// has nothing to deny.
func (d *decisions) allowed(k int32) bool { return k < 0 || d.verdicts[k].allowed }

func (d *decisions) decide(path string) verdict {
	dec := d.batch.Decide(path)
	if dec.Allowed {
		return verdict{allowed: true}
	}
	return verdict{denied: &denial{placeholder: Placeholder(path, d.tier.Label), decision: dec}}
}

// placeholder replaces content from the denied path with index k.
func (d *decisions) placeholder(kind session.PartKind, k int32) session.Part {
	return session.Part{Kind: kind, Text: d.verdicts[k].denied.placeholder, SourcePath: d.set.paths[k], Redacted: true}
}

// denied lists the denied paths in order of first appearance, with the rule
// that denied each.
func (d *decisions) denied() []DeniedPath {
	out := []DeniedPath{}
	for i, path := range d.set.paths {
		if d.verdicts[i].allowed {
			continue
		}
		dec := &d.verdicts[i].denied.decision
		dp := DeniedPath{Path: path, Reason: dec.Reason, File: dec.File}
		if dec.Kind == "deny" {
			dp.Pattern, dp.Line = dec.Pattern, dec.Line
		}
		out = append(out, dp)
	}
	return out
}
