//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// BenchmarkImportTree runs `scrim import claude` as a real process on a
// generated ~/.claude/projects (importtest.WriteClaudeTree: 40 projects,
// 1,500 transcripts, about 600 MB, half with array-form results):
//   - first: into a fresh store (MB/s is of transcript bytes; MiB/cpu-s
//     divides by the process's own CPU time, Badger's goroutines included);
//   - unchanged: the same tree again, nothing new;
//   - append10: one more turn in each of 10 files, then the tree again.
//
// SCRIM_BENCH_TREE_FILES makes the tree smaller (its files, the rest scaled
// by the defaults), for a quick look.
func BenchmarkImportTree(b *testing.B) {
	root := filepath.Join(b.TempDir(), "projects")
	opts := importtest.TreeOptions{}
	if n, err := strconv.Atoi(os.Getenv("SCRIM_BENCH_TREE_FILES")); err == nil {
		opts.Files = n
	}
	files, err := importtest.WriteClaudeTree(root, opts)
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	for _, f := range files {
		total += f.Size
	}
	run := func(b *testing.B, store string) (cpu time.Duration, rss, written int64) {
		b.Helper()
		cmd := scrimProcess(b, "import", "claude", root, "--store", store)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%.2000s", err, out)
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), ru.Maxrss * 1024, ru.Oublock * 512
	}
	b.Run("first", func(b *testing.B) {
		b.SetBytes(total)
		var cpu time.Duration
		var peak int64
		for i := 0; i < b.N; i++ {
			store := filepath.Join(b.TempDir(), "store")
			c, rss, written := run(b, store)
			cpu, peak = cpu+c, max(peak, rss)
			b.StopTimer()
			size := dirSize(store)
			b.ReportMetric(float64(size)/(1<<20), "store-MiB")
			b.ReportMetric(float64(written)/float64(size), "written/store")
			os.RemoveAll(store)
			b.StartTimer()
		}
		b.ReportMetric(float64(total)*float64(b.N)/(1<<20)/cpu.Seconds(), "MiB/cpu-s")
		b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
	})
	store := filepath.Join(b.TempDir(), "store")
	run(b, store)
	b.Run("unchanged", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			run(b, store)
		}
	})
	turn := 1_000_000
	b.Run("append10", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			for k := range 10 {
				if _, err := importtest.AppendClaudeTurn(files[(k*151+i*7)%len(files)], turn); err != nil {
					b.Fatal(err)
				}
				turn++
			}
			b.StartTimer()
			run(b, store)
		}
	})
}
