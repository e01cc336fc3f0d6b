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

// Redaction is one kind of content replaced in a message.
type Redaction struct {
	Kind string `json:"kind"` // "path": content from a denied file
	Path string `json:"path,omitempty"`
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
			case p.Redacted && !hasRedaction(r.Redacted, p.SourcePath):
				r.Redacted = append(r.Redacted, Redaction{Kind: "path", Path: p.SourcePath})
			}
		}
		if why, unknown := m.Unknown(); unknown && hasContent(m.Parts) {
			r.UnknownSource = &why
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

func hasRedaction(rs []Redaction, path string) bool {
	for _, r := range rs {
		if r.Kind == "path" && r.Path == path {
			return true
		}
	}
	return false
}
