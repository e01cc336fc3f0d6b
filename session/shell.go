package session

import (
	"strings"

	"github.com/scrim-dev/scrim/shellread"
)

// Attribute fills a tool result's parts and meta from r, a shellread
// Reading of body: per-file parts where the output names its files line by
// line, one attributed part for one file, the whole message for several,
// noFiles for none, and the reason when the source cannot be told (with
// what is known to have been read, if anything, as sourcePaths). head and
// tail are text around the output that is no file's (a header of the
// agent's, "[exit code 0]").
func (m *Message) Attribute(r shellread.Reading, head, body, tail string) {
	m.Meta.SourcePaths, m.Meta.UnknownSource, m.Meta.NoFiles = nil, "", false
	whole := func() {
		m.Parts = []Part{{Kind: PartToolResult, Text: head + body + tail}}
	}
	around := func(parts ...Part) {
		m.Parts = nil
		if head != "" {
			m.Parts = append(m.Parts, Part{Kind: PartToolResult, Text: strings.TrimSuffix(head, "\n")})
		}
		m.Parts = append(m.Parts, parts...)
		if tail != "" {
			m.Parts = append(m.Parts, Part{Kind: PartToolResult, Text: strings.TrimPrefix(tail, "\n")})
		}
	}
	switch {
	case r.Unknown != "":
		whole()
		m.Meta.UnknownSource = r.Unknown
		if len(r.Files) > 0 {
			m.Meta.SourcePaths = r.Files // what is known to have been read
		}
	case len(r.Files) == 0:
		whole()
		m.Meta.NoFiles = true
	case r.Parts != nil:
		parts := make([]Part, len(r.Parts))
		for i, pt := range r.Parts {
			parts[i] = Part{Kind: PartToolResult, Text: strings.TrimSuffix(pt.Text, "\n"), SourcePath: pt.File}
		}
		around(parts...)
		m.SyncSourcePaths(r.Files...)
	case len(r.Files) == 1:
		if tail != "" {
			body = strings.TrimSuffix(body, "\n")
		}
		around(Part{Kind: PartToolResult, Text: body, SourcePath: r.Files[0]})
		m.SyncSourcePaths()
	default:
		whole()
		m.Meta.SourcePaths = r.Files
	}
}
