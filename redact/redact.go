package redact

import (
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
	r.reserve(msgs)
	// Deciding touches the disk and copying touches memory: do both at once.
	decided := r.dec.start()
	var out []session.Message
	if r.rep.Events == 0 {
		// One bulk copy into fresh memory, then each copy gets its own
		// storage: cheaper than building the slice message by message,
		// above all while the garbage collector is running.
		out = append([]session.Message(nil), msgs...)
		for i := range out {
			c := &out[i]
			c.Parts = r.copyParts(c.Parts)
			c.Meta.SourcePaths = r.copyPaths(c.Meta.SourcePaths)
		}
	} else {
		out = make([]session.Message, 0, len(msgs)-r.rep.Events)
		for i := range msgs {
			if msgs[i].Role == session.RoleEvent {
				continue
			}
			out = append(out, msgs[i])
			c := &out[len(out)-1]
			c.Parts = r.copyParts(c.Parts)
			c.Meta.SourcePaths = r.copyPaths(c.Meta.SourcePaths)
		}
	}
	<-decided
	r.rep.DeniedPaths = r.dec.denied()
	for _, k := range r.tagged {
		in, c := &msgs[k.in], &out[k.out]
		if in.Attributed() && !r.unattributedDenied(in) {
			c.Parts = r.redactParts(c.Parts)
		} else {
			c.Parts = r.redactWhole(in, c.Parts)
		}
	}
	r.rep.Messages = len(out)
	return out, r.rep
}

// run is the state of one History call: its decisions and the arenas that
// copies are cut from (one allocation each instead of one per message).
type run struct {
	tier   *policy.Tier
	dec    *decisions
	rep    Report
	tagged []at // messages that carry paths, the only ones redaction can change
	parts  []session.Part
	paths  []string
	input  []byte
}

// at is a message's index in the input and in the output.
type at struct{ in, out int }

// reserve sizes the arenas, counts events and messages of unknown source, and
// notes every message with paths and every path to decide. Events are
// dropped, so their paths are not decided.
func (r *run) reserve(msgs []session.Message) {
	var parts, paths, input int
	for i := range msgs {
		m := &msgs[i]
		if m.Role == session.RoleEvent {
			r.rep.Events++
			continue
		}
		parts += len(m.Parts)
		paths += len(m.Meta.SourcePaths)
		tagged := len(m.Meta.SourcePaths) > 0
		for _, p := range m.Meta.SourcePaths {
			r.dec.note(p)
		}
		for j := range m.Parts {
			pt := &m.Parts[j]
			input += len(pt.Input)
			if pt.SourcePath != "" {
				r.dec.note(pt.SourcePath)
				tagged = true
			}
		}
		if tagged {
			r.tagged = append(r.tagged, at{i, i - r.rep.Events})
		} else if m.Role == session.RoleTool {
			r.rep.UnknownSource++
		}
	}
	r.parts = make([]session.Part, parts)
	r.paths = make([]string, paths)
	r.input = make([]byte, input)
}

// copyParts copies parts into the arena. The copy's capacity is its length,
// so that an append by the caller cannot run into the next message's parts.
func (r *run) copyParts(parts []session.Part) []session.Part {
	if parts == nil {
		return nil
	}
	k := len(parts)
	out := r.parts[:k:k]
	r.parts = r.parts[k:]
	copy(out, parts)
	for i := range out {
		if in := out[i].Input; in != nil {
			b := r.input[:len(in):len(in)]
			r.input = r.input[len(in):]
			copy(b, in)
			out[i].Input = b
		}
	}
	return out
}

func (r *run) copyPaths(paths []string) []string {
	if paths == nil {
		return nil
	}
	if len(paths) == 0 {
		return []string{}
	}
	k := len(paths)
	out := r.paths[:k:k]
	r.paths = r.paths[k:]
	copy(out, paths)
	return out
}

// allowed is the decision for a path noted by reserve.
func (r *run) allowed(path string) bool { return r.dec.get(path).allowed }

// unattributedDenied reports whether m lists a denied path in sourcePaths that
// none of its parts carries: content from it cannot be told apart, so the
// message must go whole (fail closed).
func (r *run) unattributedDenied(m *session.Message) bool {
	for _, path := range m.Meta.SourcePaths {
		if carried(m.Parts, path) {
			continue
		}
		if !r.allowed(path) {
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
func (r *run) redactParts(parts []session.Part) []session.Part {
	w, redacted := 0, 0
	for i := range parts {
		pt := parts[i]
		if pt.SourcePath == "" || r.allowed(pt.SourcePath) {
			parts[w] = pt
			w++
			continue
		}
		redacted++
		if w > 0 && parts[w-1].Redacted && parts[w-1].SourcePath == pt.SourcePath {
			continue // consecutive parts of one denied file: one placeholder
		}
		parts[w] = r.placeholder(pt.Kind, pt.SourcePath)
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
// in order (fail closed). Otherwise its copy is kept.
func (r *run) redactWhole(m *session.Message, copied []session.Part) []session.Part {
	var denied []string
	add := func(path string) {
		if path == "" || r.allowed(path) {
			return
		}
		for _, d := range denied {
			if d == path {
				return
			}
		}
		denied = append(denied, path)
	}
	for _, path := range m.Meta.SourcePaths {
		add(path)
	}
	for i := range m.Parts {
		add(m.Parts[i].SourcePath)
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
	for i, path := range denied {
		out[i] = r.placeholder(kind, path)
	}
	r.rep.RedactedParts += len(m.Parts)
	r.rep.RedactedMessages++
	return out
}

// placeholder replaces content from path, which has been denied.
func (r *run) placeholder(kind session.PartKind, path string) session.Part {
	return session.Part{Kind: kind, Text: r.dec.get(path).placeholder, SourcePath: path, Redacted: true}
}
