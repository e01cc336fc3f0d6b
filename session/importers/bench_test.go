package importers_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/claude"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// BenchmarkImportClaude measures parse + store of a generated 60 MB
// transcript into a fresh store (MB/s is of transcript bytes).
func BenchmarkImportClaude(b *testing.B) {
	file := filepath.Join(b.TempDir(), "big.jsonl")
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	want, err := importtest.WriteClaudeTranscript(f, 60<<20)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	fi, _ := os.Stat(file)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		st, err := session.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := importers.Import(st, claude.Agent, file, claude.New)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if res.Messages != want {
			b.Fatalf("%d messages, want %d", res.Messages, want)
		}
		st.Close()
		b.StartTimer()
	}
}
