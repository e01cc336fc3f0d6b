package codex

import (
	"testing"

	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// FuzzLine feeds arbitrary transcripts through the whole import (see
// importtest.FuzzImport). Seeds: testdata/fuzz/FuzzLine.
func FuzzLine(f *testing.F) { importtest.FuzzImport(f, Agent, New) }
