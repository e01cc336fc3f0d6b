package opencode

import (
	"testing"

	"github.com/scrim-dev/scrim/session/importers"
)

// FuzzExport reads arbitrary exports and builds their sessions: it must
// never panic, and every message it builds must be one the store accepts
// (Validate is what the store checks). Seeds: testdata/fuzz/FuzzExport.
func FuzzExport(f *testing.F) {
	paths := importers.NewPaths()
	f.Fuzz(func(t *testing.T, data []byte) {
		var rd importers.Read
		convs, err := readJSON("/w/export.json", data, &rd)
		if err != nil {
			return // not an export: refused, which is right
		}
		for i := range convs {
			for _, m := range build("/w/export.json", &convs[i], paths, &rd).Messages {
				if err := m.Validate(); err != nil {
					t.Fatalf("message the store refuses, built from %q: %v", data, err)
				}
			}
		}
	})
}
