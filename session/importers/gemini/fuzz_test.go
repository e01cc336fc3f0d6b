package gemini

import (
	"testing"

	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// FuzzSession feeds arbitrary files through the whole import (see
// importtest.FuzzSource). Seeds: testdata/fuzz/FuzzSession.
func FuzzSession(f *testing.F) { importtest.FuzzSource(f, Source, "session-fuzz.jsonl") }
