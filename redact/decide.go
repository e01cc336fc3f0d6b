package redact

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/scrim-dev/scrim/policy"
)

// parallelFrom is how many distinct paths make it worth deciding them on
// several cores: below it, starting goroutines costs more than it saves.
const parallelFrom = 64

// decisions holds one History call's answers: every distinct path of the
// history, decided exactly once. Deciding resolves symlinks on disk, so it is
// by far the most expensive step, and paths are independent: they are
// decided in parallel.
type decisions struct {
	p        *policy.Policy
	tier     *policy.Tier
	batch    *policy.Batch
	index    map[string]int32
	paths    []string // in order of first appearance
	verdicts []verdict
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
	}
	return k
}

// allowed reports whether the path with index k may be read; -1, no path,
// has nothing to deny.
func (d *decisions) allowed(k int32) bool { return k < 0 || d.verdicts[k].allowed }

// start decides every noted path in the background; the channel is closed
// when all are decided.
func (d *decisions) start() <-chan struct{} {
	done := make(chan struct{})
	if len(d.paths) == 0 {
		close(done)
		return done
	}
	go func() {
		d.decideAll()
		close(done)
	}()
	return done
}

// decideAll decides every noted path once.
func (d *decisions) decideAll() {
	d.batch.Prefetch(d.paths)
	n := len(d.paths)
	d.verdicts = make([]verdict, n)
	workers := min(runtime.GOMAXPROCS(0), 8, n/parallelFrom)
	if workers <= 1 {
		for i := range d.paths {
			d.verdicts[i] = d.decide(d.paths[i])
		}
		return
	}
	const chunk = 16
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				start := int(next.Add(chunk)) - chunk
				if start >= n {
					return
				}
				for i := start; i < min(start+chunk, n); i++ {
					d.verdicts[i] = d.decide(d.paths[i])
				}
			}
		})
	}
	wg.Wait()
}

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
