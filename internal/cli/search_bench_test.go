//go:build unix

package cli

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// BenchmarkSearchTree runs `scrim search` as a real process, cold (a fresh
// process each time, so opening the store is in the figure), on a store
// holding the generated 1,500-file tree of BenchmarkImportTree (about 600
// MB of transcripts). It reports the time to the first hit line on
// standard output and to the end of the process:
//   - rare: a file name that a few hundred sessions mention;
//   - common: a phrase in every user prompt (hundreds of thousands of hits);
//   - none: text that is nowhere, so every record is read;
//   - model: rare, for a tier that may not read a tenth of the packages, so
//     every session with a hit is redacted whole, as scrim redact would.
//
// SCRIM_BENCH_TREE_FILES makes the tree smaller, for a quick look.
func BenchmarkSearchTree(b *testing.B) {
	root := filepath.Join(b.TempDir(), "projects")
	opts := importtest.TreeOptions{}
	if n, err := strconv.Atoi(os.Getenv("SCRIM_BENCH_TREE_FILES")); err == nil {
		opts.Files = n
	}
	if _, err := importtest.WriteClaudeTree(root, opts); err != nil {
		b.Fatal(err)
	}
	store := filepath.Join(b.TempDir(), "store")
	if out, err := scrimProcess(b, "import", "claude", root, "--store", store).CombinedOutput(); err != nil {
		b.Fatalf("import: %v\n%.2000s", err, out)
	}
	os.RemoveAll(root) // the page cache is the store's, as after a reboot and one import
	pol := filepath.Join(b.TempDir(), "policy.toml")
	if err := os.WriteFile(pol, []byte(benchSearchPolicy), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"rare", []string{"file123.go"}},
		{"common", []string{"fix what is wrong"}},
		{"none", []string{"zq-no-such-text"}},
		{"model", []string{"file123.go", "--model", "bench/limited", "--policy", pol}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var first, all time.Duration
			hits := 0
			for i := 0; i < b.N; i++ {
				cmd := scrimProcess(b, append([]string{"search", "--store", store}, bc.args...)...)
				out, err := cmd.StdoutPipe()
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				sc := bufio.NewScanner(out)
				sc.Buffer(nil, 1<<20)
				lines := 0
				for sc.Scan() {
					// The first line names the session; the hit follows.
					if lines++; lines == 2 {
						first += time.Since(start)
					}
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
				all += time.Since(start)
				hits = lines
			}
			b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "first-hit-ms")
			b.ReportMetric(float64(all.Milliseconds())/float64(b.N), "all-hits-ms")
			b.ReportMetric(float64(hits), "lines")
		})
	}
}

// benchSearchPolicy denies bench/limited the generated trees' pkg1* folders.
const benchSearchPolicy = `
default_tier = "limited"

[tiers.limited]
label = "limited"
read  = ["/**"]
deny  = ["**/pkg1*/**"]
`
