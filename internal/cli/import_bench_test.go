//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// writeTranscript writes a synthetic Claude Code transcript of about size
// bytes to file (importtest.WriteClaudeTranscript) and returns the number
// of messages an import makes of it.
func writeTranscript(tb testing.TB, file string, size int64) int {
	tb.Helper()
	f, err := os.Create(file)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	n, err := importtest.WriteClaudeTranscript(f, size)
	if err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return n
}

// BenchmarkImportCommand runs `scrim import claude` on a generated 60 MB
// transcript as a real process into a fresh store, and reports its peak
// anonymous memory (the import's own: heap, stacks, Badger's arenas) beside
// the file, its peak resident memory (ru_maxrss, which also counts the page
// cache of the store's memory-mapped files, which the kernel reclaims at
// will) and the CPU time it used.
func BenchmarkImportCommand(b *testing.B) {
	dir := b.TempDir()
	file := filepath.Join(dir, "big.jsonl")
	writeTranscript(b, file, 60<<20)
	fi, _ := os.Stat(file)
	b.SetBytes(fi.Size())
	var peak int64
	var cpu time.Duration
	var anon, fileRSS int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := scrimProcess(b, "import", "claude", file, "--store", filepath.Join(dir, "store", string(rune('a'+i%26))))
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		stop := make(chan struct{})
		sampled := make(chan [2]int64)
		go sampleRSS(cmd.Process.Pid, stop, sampled)
		err := cmd.Wait()
		close(stop)
		s := <-sampled
		anon, fileRSS = max(anon, s[0]), max(fileRSS, s[1])
		if err != nil {
			b.Fatal(err)
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		peak = max(peak, ru.Maxrss*1024)
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		b.StopTimer()
		os.RemoveAll(filepath.Join(dir, "store"))
		b.StartTimer()
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(float64(anon)/(1<<20), "peak-anon-MiB")
	b.ReportMetric(float64(anon)/float64(fi.Size()), "peak-anon/file")
	b.ReportMetric(float64(fileRSS)/(1<<20), "peak-file-MiB")
	b.ReportMetric(float64(fi.Size())*float64(b.N)/(1<<20)/cpu.Seconds(), "MiB/cpu-s")
}

// sampleRSS polls a process's anonymous and file-backed resident memory
// (what ru_maxrss adds up) until stop, and sends the peaks of each.
func sampleRSS(pid int, stop <-chan struct{}, out chan<- [2]int64) {
	var peak [2]int64
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	for {
		if b, err := os.ReadFile(path); err == nil {
			for _, ln := range strings.Split(string(b), "\n") {
				f := strings.Fields(ln)
				if len(f) < 2 {
					continue
				}
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				switch f[0] {
				case "RssAnon:":
					peak[0] = max(peak[0], kb*1024)
				case "RssFile:":
					peak[1] = max(peak[1], kb*1024)
				}
			}
		}
		select {
		case <-stop:
			out <- peak
			return
		case <-time.After(2 * time.Millisecond):
		}
	}
}
