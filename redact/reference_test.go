package redact

import (
	"slices"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// reference is History's rule on one screen, one message at a time, with
// no chunks, blocks or shared storage: FuzzHistory holds the engine to it.
func reference(msgs []session.Message, model string, p *policy.Policy) ([]session.Message, Report) {
	tier, _ := p.TierFor(model)
	rep := Report{Tier: Tier{Name: tier.Name, Label: tier.Label}, DeniedPaths: []DeniedPath{}, DerivedFrom: []PathCount{}, SecretRules: []RuleCount{}}
	verdict := map[string]policy.Decision{}
	allowed := func(path string) bool {
		d, seen := verdict[path]
		if !seen {
			d = p.Decide(tier, path)
			verdict[path] = d
			if !d.Allowed {
				dp := DeniedPath{Path: path, Reason: d.Reason}
				if d.Kind == "deny" {
					dp.Pattern, dp.Line = d.Pattern, d.Line
				}
				rep.DeniedPaths = append(rep.DeniedPaths, dp)
			}
		}
		return d.Allowed
	}
	ph := func(kind session.PartKind, path string) session.Part {
		return session.Part{Kind: kind, Text: Placeholder(path, tier.Label), SourcePath: path, Redacted: true}
	}
	var out []session.Message
	for _, m := range msgs {
		if m.Role == session.RoleEvent {
			rep.Events++
			continue
		}
		_, unknown := m.Unknown()
		var denied []string // in the order the paths are first met: sourcePaths, then parts
		for _, path := range append(slices.Clone(m.Meta.SourcePaths), partPaths(m.Parts)...) {
			if !allowed(path) && !slices.Contains(denied, path) {
				denied = append(denied, path)
			}
		}
		whole := !m.Attributed() || slices.ContainsFunc(denied, func(path string) bool { return !carried(m.Parts, path) })
		var parts []session.Part
		redacted := false
		switch {
		case len(denied) == 0:
			parts = slices.Clone(m.Parts)
		case whole:
			kind := session.PartText
			if i := slices.IndexFunc(m.Parts, func(pt session.Part) bool { return pt.Kind != session.PartToolCall }); i >= 0 {
				kind = m.Parts[i].Kind
			}
			for _, path := range denied {
				parts = append(parts, ph(kind, path))
			}
			rep.RedactedMessages, rep.RedactedParts, redacted = rep.RedactedMessages+1, rep.RedactedParts+len(m.Parts), true
		default:
			n := 0
			for _, pt := range m.Parts {
				switch {
				case pt.SourcePath == "" || allowed(pt.SourcePath):
					parts = append(parts, pt)
				case len(parts) > 0 && parts[len(parts)-1].Redacted && parts[len(parts)-1].SourcePath == pt.SourcePath:
					n++ // consecutive parts of one file: one placeholder
				default:
					parts, n = append(parts, ph(pt.Kind, pt.SourcePath)), n+1
				}
			}
			rep.RedactedMessages, rep.RedactedParts, redacted = rep.RedactedMessages+1, rep.RedactedParts+n, true
		}
		// Content of unknown source left after that: withheld, in one
		// placeholder after the paths', or sent unchecked and counted.
		rest, kind := 0, session.PartKind(session.PartToolResult)
		for _, pt := range parts {
			if pt.Kind != session.PartToolCall && !pt.Redacted {
				rest, kind = rest+1, pt.Kind
			}
		}
		switch {
		case unknown && tier.WithholdsUnknown() && rest > 0:
			kept := slices.DeleteFunc(parts, func(pt session.Part) bool { return pt.Kind != session.PartToolCall && !pt.Redacted })
			parts = append(kept, session.Part{Kind: kind, Text: Withheld(tier.Label), Redacted: true})
			rep.RedactedParts, rep.Withheld = rep.RedactedParts+rest, rep.Withheld+1
			if !redacted {
				rep.RedactedMessages++
			}
		case unknown && rest > 0:
			rep.UnknownSource++ // sent unchecked
		}
		if m.Parts == nil && parts == nil {
			parts = nil
		} else if parts == nil {
			parts = []session.Part{}
		}
		m.Parts = parts
		m.Meta.SourcePaths = slices.Clone(m.Meta.SourcePaths)
		out = append(out, m)
	}
	rep.Messages = len(out)
	if out == nil {
		out = []session.Message{}
	}
	return out, rep
}
