package redact

import (
	"runtime"
	"sync"

	"github.com/scrim-dev/scrim/policy"
)

// spanSize is how many new paths are handed to the deciding goroutines at a
// time. Deciding only starts on other cores once a history has that many
// distinct paths: below it, goroutines cost more than they save.
const spanSize = 64

// decisions holds one History call's answers: every distinct path of the
// history, decided exactly once. Deciding resolves symlinks on disk, so it is
// by far the most expensive step, and paths are independent: while History
// copies messages and notes their paths, the paths noted so far are decided
// on the other cores.
type decisions struct {
	p        *policy.Policy
	tier     *policy.Tier
	batch    *policy.Batch
	index    map[string]int32
	paths    []string // in order of first appearance
	verdicts []verdict

	sent  int       // paths[:sent] have been handed out
	spans []span    // what has been handed out, in order
	work  chan span // nil until the first span
	wg    sync.WaitGroup
}

// span is a run of paths handed to a deciding goroutine and where its
// verdicts go.
type span struct {
	paths []string
	out   []verdict
}

// verdict is a decision and, for a denied path, its placeholder text (built
// once, shared by every part it replaces).
type verdict struct {
	allowed     bool
	placeholder string
	decision    policy.Decision
}

func newDecisions(p *policy.Policy, t *policy.Tier) *decisions {
	return &decisions{p: p, tier: t, batch: p.NewBatch(t), index: map[string]int32{}}
}

// note records a path to decide and returns its index (-1 for no path).
func (d *decisions) note(path string) int32 {
	if path == "" {
		return -1
	}
	k, ok := d.index[path]
	if !ok {
		k = int32(len(d.paths))
		d.index[path] = k
		d.paths = append(d.paths, path)
		if len(d.paths)-d.sent == spanSize {
			d.handOut()
		}
	}
	return k
}

// handOut gives the paths noted since the last span to the deciding
// goroutines, starting them the first time.
func (d *decisions) handOut() {
	n := len(d.paths)
	if d.sent == n {
		return
	}
	if d.work == nil {
		d.work = make(chan span, 256)
		for range min(runtime.GOMAXPROCS(0), 8) {
			d.wg.Go(func() {
				for s := range d.work {
					for i, path := range s.paths {
						s.out[i] = d.decide(path)
					}
				}
			})
		}
	}
	// The span's capacity ends at n: later notes append past it, never
	// into what a goroutine reads.
	s := span{paths: d.paths[d.sent:n:n], out: make([]verdict, n-d.sent)}
	d.spans = append(d.spans, s)
	d.sent = n
	d.work <- s
}

// finish decides what is left and waits for every decision. A history with
// fewer than spanSize distinct paths is decided here, on this goroutine.
func (d *decisions) finish() {
	if d.work == nil {
		d.verdicts = make([]verdict, len(d.paths))
		for i, path := range d.paths {
			d.verdicts[i] = d.decide(path)
		}
		return
	}
	d.handOut()
	close(d.work)
	d.wg.Wait()
	d.verdicts = make([]verdict, 0, len(d.paths))
	for _, s := range d.spans {
		d.verdicts = append(d.verdicts, s.out...)
	}
}

// allowed reports whether the path with index k may be read; -1, no path,
// has nothing to deny.
func (d *decisions) allowed(k int32) bool { return k < 0 || d.verdicts[k].allowed }

func (d *decisions) decide(path string) verdict {
	dec := d.batch.Decide(path)
	v := verdict{allowed: dec.Allowed, decision: dec}
	if !dec.Allowed {
		v.placeholder = Placeholder(path, d.tier.Label)
	}
	return v
}

// denied lists the denied paths in order of first appearance, with the rule
// that denied each.
func (d *decisions) denied() []DeniedPath {
	out := []DeniedPath{}
	for i, path := range d.paths {
		v := &d.verdicts[i]
		if v.allowed {
			continue
		}
		dp := DeniedPath{Path: path, Reason: v.decision.Reason}
		if v.decision.Kind == "deny" {
			dp.Pattern, dp.Line = v.decision.Pattern, v.decision.Line
		}
		out = append(out, dp)
	}
	return out
}
