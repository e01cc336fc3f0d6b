package codex

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// FuzzLine feeds arbitrary transcripts through the whole import: it must
// never panic, never fail on bad input (only skip it), and only write
// messages the store accepts. Seeds: testdata/fuzz/FuzzLine.
func FuzzLine(f *testing.F) {
	st := importtest.Store(f)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(dir, "fuzz.jsonl")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		res, err := importers.Import(st, Agent, file, New)
		if err != nil {
			t.Fatalf("import failed on input %q: %v", data, err)
		}
		if res.Skipped > res.Lines {
			t.Fatalf("%d skipped of %d lines", res.Skipped, res.Lines)
		}
	})
}
