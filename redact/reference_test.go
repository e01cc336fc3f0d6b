package redact

import (
	"cmp"
	"slices"
	"strings"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/secrets"
	"github.com/scrim-dev/scrim/session"
)

// reference is History's whole rule, one message at a time, with no
// chunks, blocks or shared storage: the path rule (pathRule has it alone),
// derived and secret redaction and the report. FuzzHistory holds the engine
// to it.
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
	var stored []session.Message // the messages out holds copies of, in order
	var withheld []withheldText  // for derived redaction: what the path rule withheld…
	var allowedTexts []string    // …and what it let through from paths the tier may read
	for _, m := range msgs {
		if m.Role == session.RoleEvent {
			rep.Events++
			continue
		}
		order := int64(len(out)) << 16
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
		tagged := len(m.Meta.SourcePaths) > 0 || m.Attributed()
		for i, pt := range m.Parts {
			switch {
			case !tagged || pt.Kind == session.PartToolCall && whole:
			case whole && len(denied) > 0:
				withheld = append(withheld, withheldText{pt.Text, denied[0], order + int64(i)})
			case whole && !unknown:
				allowedTexts = append(allowedTexts, pt.Text)
			case whole:
			case pt.Kind == session.PartToolCall && pt.SourcePath != "" && !allowed(pt.SourcePath):
				_, was, _ := writtenCall(pt, Placeholder(pt.SourcePath, tier.Label))
				for _, s := range was {
					withheld = append(withheld, withheldText{s, pt.SourcePath, order + int64(i)})
				}
			case pt.SourcePath != "" && !allowed(pt.SourcePath):
				withheld = append(withheld, withheldText{pt.Text, pt.SourcePath, order + int64(i)})
			case pt.SourcePath != "" && !unknown && pt.Kind != session.PartToolCall: // a call is not what the tier reads
				allowedTexts = append(allowedTexts, pt.Text)
			}
		}
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
				case pt.Kind == session.PartToolCall: // it writes the file: its input holds some
					call, _, ok := writtenCall(pt, Placeholder(pt.SourcePath, tier.Label))
					if parts = append(parts, call); ok {
						n++
					}
				case len(parts) > 0 && parts[len(parts)-1].Redacted && parts[len(parts)-1].SourcePath == pt.SourcePath:
					n++ // consecutive parts of one file: one placeholder
				default:
					parts, n = append(parts, ph(pt.Kind, pt.SourcePath)), n+1
				}
			}
			if n > 0 {
				rep.RedactedMessages, rep.RedactedParts, redacted = rep.RedactedMessages+1, rep.RedactedParts+n, true
			}
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
		stored = append(stored, m)
		m.Parts = parts
		m.Meta.SourcePaths = slices.Clone(m.Meta.SourcePaths)
		out = append(out, m)
	}
	rep.Messages = len(out)
	if out == nil {
		out = []session.Message{}
	}
	if tier.RedactsDerived() || tier.RedactsSecrets() {
		var fps []refFingerprint
		if tier.RedactsDerived() {
			fps = referenceFingerprints(withheld, allowedTexts, tier.Label)
		}
		referenceSpans(stored, out, fps, tier, &rep)
	}
	return out, rep
}

// refFingerprint is a fingerprint as the reference keeps it: plainly.
type refFingerprint struct{ text, path, placeholder string }

// referenceFingerprints is derived redaction's rule for what to look for:
// every fingerprint of withheld content, with the path where it first
// appears, unless content the tier may read has it too.
func referenceFingerprints(withheld []withheldText, allowed []string, label string) []refFingerprint {
	slices.SortStableFunc(withheld, func(a, b withheldText) int { return cmp.Compare(a.order, b.order) })
	also := map[string]bool{}
	for _, a := range allowed {
		eachCandidate(a, func(fp string) { also[fp] = true })
	}
	seen := map[string]bool{}
	var fps []refFingerprint
	for _, w := range withheld {
		eachFingerprint(w.text, func(fp string) {
			if namesFile(fp, w.path) {
				return // the file's name, which its placeholder says
			}
			if !seen[fp] && !also[fp] {
				fps = append(fps, refFingerprint{text: fp, path: w.path, placeholder: Placeholder(w.path, label)})
			}
			seen[fp] = true
		})
	}
	return fps
}

// referenceSpans replaces, in every unit of what is still content, each
// occurrence of a fingerprint (found by plain search) and each credential.
func referenceSpans(stored, out []session.Message, fps []refFingerprint, tier *policy.Tier, rep *Report) {
	var st spanTally
	for k := range out {
		m := &out[k]
		changed, before := false, slices.ContainsFunc(m.Parts, func(p session.Part) bool { return p.Redacted || len(p.Filtered) > 0 })
		m.Parts = slices.Clone(m.Parts)
		for j := range m.Parts {
			p := &m.Parts[j]
			if p.Redacted {
				continue
			}
			repl := map[int]string{}
			var notes []session.Filtered
			p.EachUnit(func(u session.Unit) {
				if slices.ContainsFunc(p.Filtered, func(f session.Filtered) bool { return f.Kind == "path" && f.Key == u.Key }) {
					return // the path rule's placeholder
				}
				var spans []span
				for _, f := range fps {
					for at := 0; ; {
						i := strings.Index(u.Text[at:], f.text)
						if i < 0 {
							break
						}
						spans = append(spans, span{start: at + i, end: at + i + len(f.text), kind: "derived", path: f.path, placeholder: f.placeholder})
						at += i + 1
					}
				}
				if tier.RedactsSecrets() {
					for _, sp := range secrets.ScanText(u.Text) {
						spans = append(spans, span{start: sp.Start, end: sp.End, kind: "secret", rule: sp.Rule, placeholder: secrets.Placeholder(sp.Rule, tier.Label)})
					}
				}
				if len(spans) == 0 {
					return
				}
				spans = merge(spans, u.Text)
				for _, sp := range spans {
					st.count(sp)
				}
				text, ns := replace(u.Text, spans, u.Key)
				notes = append(notes, ns...)
				repl[u.Key] = text
			})
			if len(notes) == 0 {
				continue
			}
			changed = true
			if text, ok := repl[-1]; ok {
				p.Text = text
			} else {
				p.Input = session.ReplaceUnits(p.Input, repl)
			}
			p.Filtered = append(p.Filtered[:len(p.Filtered):len(p.Filtered)], notes...)
		}
		if changed && !before {
			rep.RedactedMessages++
		}
	}
	st.report(rep)
}
