package importers

import (
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
	m.Attribute(shellread.Read(cmd, body, p.Resolve), head, body, "")
}
