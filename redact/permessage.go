package redact

import "github.com/scrim-dev/scrim/session"

// MessageReport says what happened to one message: which denied files'
// content was replaced, whether it is of unknown source (and why) and
// whether it was withheld for that.
type MessageReport struct {
	Seq           uint64      `json:"seq"`
	Redacted      []Redaction `json:"redacted"`
	UnknownSource *string     `json:"unknownSource"`
	Withheld      bool        `json:"withheld"`
}

// Redaction is one kind of content replaced in a message: "path", content
// from the denied file Path; "derived", spans that repeat content of Path;
// "secret", credentials that gitleaks' Rule found.
type Redaction struct {
	Kind string `json:"kind"`
	Path string `json:"path,omitempty"`
	Rule string `json:"rule,omitempty"`
}

// PerMessage lists, for each message of stored (events included, as
// History takes them) that sent — History's result for them — redacted or
// withheld, or that is of unknown source, what happened to it, in order. It
// reads the placeholders History left, so it can never disagree with what
// is sent.
func PerMessage(stored, sent []session.Message) []MessageReport {
	out := []MessageReport{}
	k := 0
	for i := range stored {
		m := &stored[i]
		if m.Role == session.RoleEvent {
			continue
		}
		if k >= len(sent) {
			break
		}
		s := &sent[k]
		k++
		r := MessageReport{Seq: m.Seq}
		for _, p := range s.Parts {
			switch {
			case p.Redacted && p.SourcePath == "":
				r.Withheld = true
			case p.Redacted:
				r.Redacted = addRedaction(r.Redacted, Redaction{Kind: "path", Path: p.SourcePath})
			}
			for _, f := range p.Filtered {
				r.Redacted = addRedaction(r.Redacted, Redaction{Kind: f.Kind, Path: f.Path, Rule: f.Rule})
			}
		}
		if why, unknown := m.Unknown(); unknown && hasContent(m.Parts) {
			r.UnknownSource = new(why) // not &why: that moved why to the heap for every message
		}
		if len(r.Redacted) > 0 || r.Withheld || r.UnknownSource != nil {
			if r.Redacted == nil {
				r.Redacted = []Redaction{}
			}
			out = append(out, r)
		}
	}
	return out
}

// addRedaction adds r to rs unless it is there already.
func addRedaction(rs []Redaction, r Redaction) []Redaction {
	for _, x := range rs {
		if x == r {
			return rs
		}
	}
	return append(rs, r)
}

// StoredSpans says, for each part of stored whose copy in sent (History's
// result for it) has placeholders inside it, what they replaced: by the
// stored part's index, with StoredStart and StoredEnd in its units.
func StoredSpans(stored, sent *session.Message) map[int][]session.Filtered {
	if stored == nil || sent == nil {
		return nil
	}
	var out map[int][]session.Filtered
	of := partsOf(stored.Parts, sent.Parts)
	for j := range sent.Parts {
		if fs := sent.Parts[j].Filtered; len(fs) > 0 && of[j] >= 0 {
			if out == nil {
				out = map[int][]session.Filtered{}
			}
			out[of[j]] = fs
		}
	}
	return out
}

// Placeholders counts what redaction replaced in a sent message: parts
// replaced whole, and spans replaced inside parts (derived content,
// credentials). nil counts none.
func Placeholders(m *session.Message) int {
	if m == nil {
		return 0
	}
	n := 0
	for i := range m.Parts {
		if m.Parts[i].Redacted {
			n++
		}
		n += len(m.Parts[i].Filtered)
	}
	return n
}
