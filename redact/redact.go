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
// the input's strings (immutable) but have their own Parts and SourcePaths
// slices. Events are dropped: they are never provider content.
func History(msgs []session.Message, model string, p *policy.Policy) ([]session.Message, Report) {
	tier, _ := p.TierFor(model)
	d := decider{p: p, tier: tier, memo: map[string]bool{}}
	rep := Report{Tier: Tier{Name: tier.Name, Label: tier.Label}, DeniedPaths: []DeniedPath{}}
	d.rep = &rep
	out := make([]session.Message, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		if m.Role == session.RoleEvent {
			rep.Events++
			continue
		}
		c := *m
		if m.Meta.SourcePaths == nil {
			if m.Role == session.RoleTool {
				rep.UnknownSource++
			}
			c.Parts = cloneParts(m.Parts)
			out = append(out, c)
			continue
		}
		c.Meta.SourcePaths = append([]string(nil), m.Meta.SourcePaths...)
		if m.Attributed() {
			c.Parts = d.redactParts(m.Parts)
		} else {
			c.Parts = d.redactWhole(m)
		}
		out = append(out, c)
	}
	rep.Messages = len(out)
	return out, rep
}

type decider struct {
	p    *policy.Policy
	tier *policy.Tier
	memo map[string]bool
	rep  *Report
}

func (d *decider) allowed(path string) bool {
	if ok, seen := d.memo[path]; seen {
		return ok
	}
	dec := d.p.Decide(d.tier, path)
	d.memo[path] = dec.Allowed
	if !dec.Allowed {
		pat := ""
		if dec.Kind == "deny" {
			pat = dec.Pattern
		}
		d.rep.DeniedPaths = append(d.rep.DeniedPaths, DeniedPath{Path: path, Pattern: pat, Reason: dec.Reason})
	}
	return dec.Allowed
}

func (d *decider) redactParts(parts []session.Part) []session.Part {
	denied := 0
	for i := range parts {
		if parts[i].SourcePath != "" && !d.allowed(parts[i].SourcePath) {
			denied++
		}
	}
	if denied == 0 {
		return cloneParts(parts)
	}
	out := make([]session.Part, 0, len(parts))
	for i := range parts {
		pt := parts[i]
		if pt.SourcePath == "" || d.memo[pt.SourcePath] {
			out = append(out, cloneParts(parts[i:i+1])...)
			continue
		}
		d.rep.RedactedParts++
		if n := len(out); n > 0 && out[n-1].Redacted && out[n-1].SourcePath == pt.SourcePath {
			continue // consecutive parts of one denied file collapse into one placeholder
		}
		out = append(out, session.Part{Kind: pt.Kind, Text: Placeholder(pt.SourcePath, d.tier.Label), SourcePath: pt.SourcePath, Redacted: true})
	}
	d.rep.RedactedMessages++
	return out
}

// redactWhole handles a message attributed as a whole: if any of its paths is
// denied, all of its content goes, one placeholder per denied path (fail closed).
func (d *decider) redactWhole(m *session.Message) []session.Part {
	var denied []string
	for _, path := range m.Meta.SourcePaths {
		if !d.allowed(path) {
			denied = append(denied, path)
		}
	}
	if len(denied) == 0 {
		return cloneParts(m.Parts)
	}
	kind := session.PartText
	if len(m.Parts) > 0 {
		kind = m.Parts[0].Kind
	}
	out := make([]session.Part, 0, len(denied))
	for _, path := range denied {
		out = append(out, session.Part{Kind: kind, Text: Placeholder(path, d.tier.Label), SourcePath: path, Redacted: true})
	}
	d.rep.RedactedParts += len(m.Parts)
	d.rep.RedactedMessages++
	return out
}

func cloneParts(parts []session.Part) []session.Part {
	if parts == nil {
		return nil
	}
	out := make([]session.Part, len(parts))
	copy(out, parts)
	for i := range out {
		if out[i].Input != nil {
			out[i].Input = append([]byte(nil), out[i].Input...)
		}
	}
	return out
}
