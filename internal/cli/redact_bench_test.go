//go:build unix

package cli

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// spanBenchPolicy denies one package of the generated project and redacts
// derived content and credentials, like the built-in cloud tier.
const spanBenchPolicy = `
default_tier = "cloud"

[tiers.cloud]
label   = "cloud"
read    = ["/**"]
deny    = ["/home/dev/big/pkg3/**", "**/.env"]
derived = "redact"
secrets = "redact"

[tiers.paths]
label = "paths only"
read  = ["/**"]
deny  = ["/home/dev/big/pkg3/**", "**/.env"]

[[models]]
match = "paths/*"
tier  = "paths"
`

// BenchmarkRedactProcess20k runs the real scrim binary, as a user would, on
// an imported Claude Code session of about 20,000 messages: `scrim show`,
// `scrim redact` for a tier without derived and secret redaction, and for
// one with both — warm (the fingerprints gathered and kept by a preview
// before) and first (a copy of the store as the import left it: the
// fingerprints gathered and kept; the credentials were scanned by the
// import, whose built-in policy redacts them). It reports wall time and peak
// anonymous memory (what the command itself holds; the page cache of the
// store's mapped files is not counted). SCRIM_BENCH_BIN names a scrim
// binary to measure instead of this one, as for BenchmarkShowProcess.
func BenchmarkRedactProcess20k(b *testing.B) {
	dir := b.TempDir()
	file := filepath.Join(dir, "big.jsonl")
	n := writeTranscript(b, file, 175<<20)
	pristine := filepath.Join(dir, "pristine")
	pol := filepath.Join(dir, "policy.toml")
	if err := os.WriteFile(pol, []byte(spanBenchPolicy), 0o644); err != nil {
		b.Fatal(err)
	}
	if out, err := scrimProcess(b, "--store", pristine, "import", "claude", file).CombinedOutput(); err != nil {
		b.Fatalf("import: %v %s", err, out)
	}
	id := importedSession(b, pristine, file)
	b.Logf("%d messages", n)

	// run runs scrim and returns its wall time and peak anonymous memory.
	run := func(b *testing.B, store string, args ...string) (time.Duration, int64) {
		cmd := benchScrim(b, append([]string{"--store", store, "--policy", pol}, args...)...)
		var errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.Discard, &errb
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		stop := make(chan struct{})
		sampled := make(chan [2]int64)
		go sampleRSS(cmd.Process.Pid, stop, sampled)
		err := cmd.Wait()
		wall := time.Since(start)
		close(stop)
		s := <-sampled
		if err != nil || errb.Len() > 0 {
			b.Fatalf("scrim %s: %v %s", strings.Join(args, " "), err, errb.String())
		}
		return wall, s[0]
	}
	warm := filepath.Join(dir, "warm")
	copyDir(b, pristine, warm)
	run(b, warm, "redact", id, "--model", "anthropic/x") // scan once
	for _, tc := range []struct {
		name  string
		first bool
		args  []string
	}{
		{"show", false, []string{"show", id}},
		{"redact-paths-only", false, []string{"redact", id, "--model", "paths/x"}},
		{"redact-derived-secrets-warm", false, []string{"redact", id, "--model", "anthropic/x"}},
		{"redact-derived-secrets-first", true, []string{"redact", id, "--model", "anthropic/x"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var total time.Duration
			var anon int64
			for i := 0; i < b.N; i++ {
				store := warm
				if tc.first {
					b.StopTimer()
					store = filepath.Join(dir, "first")
					os.RemoveAll(store)
					copyDir(b, pristine, store)
					b.StartTimer()
				}
				wall, a := run(b, store, tc.args...)
				total, anon = total+wall, max(anon, a)
			}
			b.ReportMetric(float64(total)/float64(time.Millisecond)/float64(b.N), "wall-ms/op")
			b.ReportMetric(float64(anon)/(1<<20), "peak-anon-MiB")
		})
	}
}

func copyDir(b *testing.B, from, to string) {
	b.Helper()
	if out, err := exec.Command("cp", "-r", from, to).CombinedOutput(); err != nil {
		b.Fatalf("cp: %v %s", err, out)
	}
}
