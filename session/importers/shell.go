package importers

import (
	"strings"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/shellread"
)

// Shell attributes a shell command's output, as the agent recorded it, to
// the files the command read. head is text the agent put before the
// command's output (Codex's "Exit code: 0 … Output:"), which is no file's
// content; body is the output.
func (p *Paths) Shell(m *session.Message, cmd shellread.Command, head, body string) {
	if cmd.Home == "" {
		cmd.Home = p.home
	}
	r := shellread.Read(cmd, body, p.Resolve)
	Attribute(m, r, head, body)
}

// Attribute fills m's parts and meta from a shellread.Reading of body.
func Attribute(m *session.Message, r shellread.Reading, head, body string) {
	whole := func() {
		m.Parts = []session.Part{{Kind: session.PartToolResult, Text: head + body}}
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
		m.Parts = nil
		if head != "" {
			m.Parts = append(m.Parts, session.Part{Kind: session.PartToolResult, Text: strings.TrimSuffix(head, "\n")})
		}
		for _, pt := range r.Parts {
			m.Parts = append(m.Parts, session.Part{Kind: session.PartToolResult, Text: strings.TrimSuffix(pt.Text, "\n"), SourcePath: pt.File})
		}
		m.SyncSourcePaths(r.Files...)
	case len(r.Files) == 1:
		m.Parts = nil
		if head != "" {
			m.Parts = append(m.Parts, session.Part{Kind: session.PartToolResult, Text: strings.TrimSuffix(head, "\n")})
		}
		m.Parts = append(m.Parts, session.Part{Kind: session.PartToolResult, Text: body, SourcePath: r.Files[0]})
		m.SyncSourcePaths()
	default:
		whole()
		m.Meta.SourcePaths = r.Files
	}
}
