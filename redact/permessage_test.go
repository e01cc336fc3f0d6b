package redact

import (
	"fmt"
	"testing"

	"github.com/scrim-dev/scrim/session"
)

// TestPerMessageAllocatesForWhatItReports: a message that nothing happened
// to costs PerMessage nothing (a count asks for the reports of every
// message of a session, a million at a time), and one of unknown source
// says why.
func TestPerMessageAllocatesForWhatItReports(t *testing.T) {
	msgs := make([]session.Message, 1000)
	for i := range msgs {
		msgs[i] = session.Message{Seq: uint64(i + 1), Role: session.RoleAssistant, Parts: []session.Part{{Kind: session.PartText, Text: fmt.Sprintf("answer %d", i)}}}
	}
	if n := testing.AllocsPerRun(10, func() { PerMessage(msgs, msgs) }); n > 1 {
		t.Errorf("%.0f allocations for %d messages with nothing to report", n, len(msgs))
	}
	msgs[500] = session.Message{Seq: 501, Role: session.RoleTool, Tool: "bash", Parts: []session.Part{{Kind: session.PartToolResult, Text: "out"}}}
	msgs[500].Meta.UnknownSource = "a shell command"
	rs := PerMessage(msgs, msgs)
	if len(rs) != 1 || rs[0].Seq != 501 || rs[0].UnknownSource == nil || *rs[0].UnknownSource != "a shell command" {
		t.Fatalf("reports %+v", rs)
	}
}
