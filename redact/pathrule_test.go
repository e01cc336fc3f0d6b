package redact

import (
	"slices"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// pathRule is what History sends by the path rule alone, read on one
// screen: one message at a time, each path decided by the policy where it is
// met. It leaves out derived and secret redaction (and so the notes they put
// on parts) and the report, which reference covers: FuzzHistory holds the
// engine to it only for a tier with neither derived nor secrets = "redact".
func pathRule(msgs []session.Message, model string, p *policy.Policy) []session.Message {
	tier, _ := p.TierFor(model)
	denied := func(path string) bool { return path != "" && !p.Decide(tier, path).Allowed }
	placeholder := func(kind session.PartKind, path string) session.Part {
		return session.Part{Kind: kind, Text: Placeholder(path, tier.Label), SourcePath: path, Redacted: true}
	}
	out := []session.Message{}
	for _, m := range msgs {
		if m.Role == session.RoleEvent {
			continue // never sent
		}
		var gone []string        // the denied paths, as met: sourcePaths, then the parts'
		whole := !m.Attributed() // no part says where it is from
		for _, path := range append(slices.Clone(m.Meta.SourcePaths), partPaths(m.Parts)...) {
			if denied(path) && !slices.Contains(gone, path) {
				gone = append(gone, path)
			}
			whole = whole || denied(path) && !carried(m.Parts, path) // a denied path no part carries: fail closed
		}
		parts := m.Parts
		switch {
		case len(gone) > 0 && whole: // one placeholder per denied path, for all of it
			kind := session.PartText // of its first part that is not a tool call
			if i := slices.IndexFunc(m.Parts, func(pt session.Part) bool { return pt.Kind != session.PartToolCall }); i >= 0 {
				kind = m.Parts[i].Kind
			}
			parts = nil
			for _, path := range gone {
				parts = append(parts, placeholder(kind, path))
			}
		case len(gone) > 0: // part by part; a run of parts from one denied path is one placeholder
			parts = nil
			for _, pt := range m.Parts {
				if !denied(pt.SourcePath) {
					parts = append(parts, pt)
				} else if pt.Kind == session.PartToolCall {
					call, _, _ := writtenCall(pt, Placeholder(pt.SourcePath, tier.Label))
					parts = append(parts, call)
				} else if last := len(parts) - 1; last < 0 || !parts[last].Redacted || parts[last].SourcePath != pt.SourcePath {
					parts = append(parts, placeholder(pt.Kind, pt.SourcePath))
				}
			}
		}
		if _, unknown := m.Unknown(); unknown && tier.WithholdsUnknown() {
			parts = withholdRest(parts, Withheld(tier.Label))
		}
		m.Parts = parts
		out = append(out, m)
	}
	return out
}

// withholdRest is what a tier with unknown_source = "withhold" sends of a
// message of unknown source, once the path rule is done with it: tool calls
// and placeholders, then, for whatever else is left, one placeholder of the
// last such part's kind.
func withholdRest(parts []session.Part, withheld string) []session.Part {
	var kept []session.Part
	left, kind := 0, session.PartKind("")
	for _, pt := range parts {
		if pt.Kind == session.PartToolCall || pt.Redacted {
			kept = append(kept, pt)
		} else {
			left, kind = left+1, pt.Kind
		}
	}
	if left == 0 {
		return parts
	}
	return append(kept, session.Part{Kind: kind, Text: withheld, Redacted: true})
}

// writtenCall is what the path rule sends of pt, a tool call that writes
// the denied file pt.SourcePath: the strings of its input but its keys and
// the file's name, and its text, are placeholder. It also returns what they
// were, and whether there were any.
func writtenCall(pt session.Part, placeholder string) (session.Part, []string, bool) {
	var was []string
	var notes []session.Filtered
	note := func(key int, s string) {
		was = append(was, s)
		notes = append(notes, session.Filtered{Kind: "path", Path: pt.SourcePath, Key: key, End: len(placeholder), StoredEnd: len(s)})
	}
	if pt.Text != "" {
		note(-1, pt.Text)
		pt.Text = placeholder
	}
	repl := map[int]string{}
	pt.EachUnit(func(u session.Unit) {
		if u.Text != "" && !session.IsInputKey(pt.Input, u) && !namesFile(u.Text, pt.SourcePath) {
			note(u.Key, u.Text)
			repl[u.Key] = placeholder
		}
	})
	if len(notes) == 0 {
		return pt, nil, false
	}
	pt.Input = session.ReplaceUnits(pt.Input, repl)
	pt.Filtered = notes
	return pt, was, true
}
