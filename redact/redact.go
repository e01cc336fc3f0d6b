package redact

import (
	"slices"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// Placeholder is the exact text that replaces content from a denied path.
func Placeholder(path, tierLabel string) string {
	return "[Content from " + path + " filtered \u2014 trust tier \"" + tierLabel + "\" does not have read access]"
}

// DeniedPath is a path the tier may not read and the rule that denied it.
type DeniedPath struct {
	Path    string `json:"path"`
	Pattern string `json:"pattern,omitempty"` // deny pattern as written; "" when no read pattern matched
	Line    int    `json:"line,omitempty"`    // line of Pattern in the policy file
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
	Messages         int          `json:"messages"`         // messages in the result
	RedactedMessages int          `json:"redactedMessages"` // messages with at least one placeholder
	RedactedParts    int          `json:"redactedParts"`    // stored parts replaced
	UnknownSource    int          `json:"unknownSource"`    // tool results without sourcePaths: could not be checked
	DeniedPaths      []DeniedPath `json:"deniedPaths"`      // in order of first appearance
	Events           int          `json:"events"`           // event messages left out
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
func History(msgs []session.Message, model string, p *policy.Policy) ([]session.Message, Report) {
	tier, _ := p.TierFor(model)
	r := &run{tier: tier, dec: newDecisions(p, tier)}
	r.rep = Report{Tier: Tier{Name: tier.Name, Label: tier.Label}}
	// Each copy gets its own parts and sourcePaths, allocated message by
	// message: the garbage collector handles many small objects far better
	// than a few large arenas. The paths of tagged messages are noted as
	// they are copied and decided meanwhile on the other cores.
	out := make([]session.Message, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		if m.Role == session.RoleEvent {
			r.rep.Events++
			continue
		}
		out = append(out, *m)
		c := &out[len(out)-1]
		c.Parts = copyParts(c.Parts)
		c.Meta.SourcePaths = slices.Clone(c.Meta.SourcePaths)
		r.note(m, i, len(out)-1)
	}
	out = slices.Clip(out)
	r.dec.finish()
	r.rep.DeniedPaths = r.dec.denied()
	for _, k := range r.tagged {
		in, c := &msgs[k.in], &out[k.out]
		meta := r.idx[k.first : k.first+len(in.Meta.SourcePaths)]
		parts := r.idx[k.first+len(meta) : k.first+len(meta)+len(in.Parts)]
		if k.attributed && !r.unattributedDenied(in, meta) {
			c.Parts = r.redactParts(c.Parts, parts)
		} else {
			c.Parts = r.redactWhole(in, c.Parts, meta, parts)
		}
	}
	r.rep.Messages = len(out)
	return out, r.rep
}

// run is the state of one History call.
type run struct {
	tier   *policy.Tier
	dec    *decisions
	rep    Report
	tagged []at // messages that carry paths, the only ones redaction can change
	// idx holds, for each tagged message, the decision index of each of its
	// sourcePaths and then of each part's path (-1 for a part without):
	// the paths are hashed once, when noted.
	idx []int32
}

// at is a message's index in the input and in the output, where its
// decision indexes start in run.idx, and whether its parts carry their own
// paths.
type at struct {
	in, out, first int
	attributed     bool
}

// note counts m if it is a tool result of unknown source; if it carries
// paths, it notes them for deciding and m for the fix-up pass. Events are
// dropped, so their paths are never noted.
func (r *run) note(m *session.Message, in, out int) {
	attributed := m.Attributed()
	if len(m.Meta.SourcePaths) == 0 && !attributed {
		if m.Role == session.RoleTool {
			r.rep.UnknownSource++
		}
		return
	}
	r.tagged = append(r.tagged, at{in, out, len(r.idx), attributed})
	for _, p := range m.Meta.SourcePaths {
		r.idx = append(r.idx, r.dec.note(p))
	}
	for j := range m.Parts {
		r.idx = append(r.idx, r.dec.note(m.Parts[j].SourcePath))
	}
}

// copyParts gives parts (and their tool inputs) storage of their own; nil
// stays nil and empty stays empty.
func copyParts(parts []session.Part) []session.Part {
	out := slices.Clone(parts)
	for i := range out {
		out[i].Input = slices.Clone(out[i].Input)
	}
	return out
}

// unattributedDenied reports whether m lists a denied path in sourcePaths that
// none of its parts carries: content from it cannot be told apart, so the
// message must go whole (fail closed). meta holds the paths' decision indexes.
func (r *run) unattributedDenied(m *session.Message, meta []int32) bool {
	for i, path := range m.Meta.SourcePaths {
		if !r.dec.allowed(meta[i]) && !carried(m.Parts, path) {
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
func (r *run) redactParts(parts []session.Part, idx []int32) []session.Part {
	w, redacted := 0, 0
	for i := range parts {
		pt := parts[i]
		if r.dec.allowed(idx[i]) {
			parts[w] = pt
			w++
			continue
		}
		redacted++
		if w > 0 && parts[w-1].Redacted && parts[w-1].SourcePath == pt.SourcePath {
			continue // consecutive parts of one denied file: one placeholder
		}
		parts[w] = r.placeholder(pt.Kind, idx[i])
		w++
	}
	if redacted > 0 {
		r.rep.RedactedParts += redacted
		r.rep.RedactedMessages++
		clear(parts[w:])
	}
	return parts[:w:w]
}

// redactWhole handles a message that is attributed as a whole: if any of its
// paths is denied, all of its content goes, one placeholder per denied path
// in order (fail closed). Otherwise its copy is kept. meta and parts hold the
// decision indexes of its sourcePaths and of its parts' paths.
func (r *run) redactWhole(m *session.Message, copied []session.Part, meta, parts []int32) []session.Part {
	var denied []int32
	for _, ks := range [2][]int32{meta, parts} {
		for _, k := range ks {
			if !r.dec.allowed(k) && !slices.Contains(denied, k) {
				denied = append(denied, k)
			}
		}
	}
	if len(denied) == 0 {
		return copied
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
		out[i] = r.placeholder(kind, k)
	}
	r.rep.RedactedParts += len(m.Parts)
	r.rep.RedactedMessages++
	return out
}

// placeholder replaces content from the denied path with decision index k.
func (r *run) placeholder(kind session.PartKind, k int32) session.Part {
	return session.Part{Kind: kind, Text: r.dec.verdicts[k].placeholder, SourcePath: r.dec.paths[k], Redacted: true}
}
