//go:build unix

package importers_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/claude"
	"github.com/scrim-dev/scrim/session/importers/codex"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// BenchmarkImport measures parse + store of a generated 60 MB transcript
// into a fresh store (MB/s is of transcript bytes). MiB/cpu-s divides by the
// CPU time the process spent (Badger's goroutines included), which other
// jobs on a shared machine do not distort the way they distort wall time.
func BenchmarkImport(b *testing.B) {
	for _, tc := range []struct {
		agent    string
		factory  importers.Factory
		generate func(io.Writer, int64) (int, error)
	}{
		{claude.Agent, claude.New, importtest.WriteClaudeTranscript},
		{claude.Agent + "-array", claude.New, func(w io.Writer, n int64) (int, error) {
			return importtest.WriteClaude(w, n, importtest.ClaudeOptions{ArrayResults: true})
		}},
		{codex.Agent, codex.New, importtest.WriteCodexRollout},
	} {
		agent, _, _ := strings.Cut(tc.agent, "-")
		b.Run(tc.agent, func(b *testing.B) { benchImport(b, agent, tc.factory, tc.generate) })
	}
}

func benchImport(b *testing.B, agent string, factory importers.Factory, generate func(io.Writer, int64) (int, error)) {
	file := filepath.Join(b.TempDir(), "big.jsonl")
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	want, err := generate(f, 60<<20)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	fi, _ := os.Stat(file)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		st, err := session.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		before := cpuTime()
		res, err := importers.Import(st, agent, file, factory)
		if err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - before
		b.StopTimer()
		if res.Messages != want {
			b.Fatalf("%d messages, want %d", res.Messages, want)
		}
		st.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(fi.Size())*float64(b.N)/(1<<20)/cpu.Seconds(), "MiB/cpu-s")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
