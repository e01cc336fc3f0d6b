//go:build unix

package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/session"
)

// BenchmarkShowProcess runs `scrim show SESSION > /dev/null`, as a real
// process, on one generated session of SCRIM_BENCH_MESSAGES messages (a
// million unless set; see bigMessage), in JSON and in text, and reports its
// wall time, peak anonymous memory (heap, stacks, Badger's caches: what
// must stay bounded however long the session is), peak resident memory
// (ru_maxrss, which also counts the page cache of the store's mapped
// files) and CPU time.
//
// SCRIM_BENCH_STORE names a folder to keep the generated store in and
// reuse (writing a million messages takes a while); SCRIM_BENCH_BIN a scrim
// binary to run instead of this one (one built from another revision, to
// compare before and after).
func BenchmarkShowProcess(b *testing.B) {
	n := benchMessages(b)
	dir, id := bigStore(b, n)
	b.Logf("%d messages, store %s", n, dir)
	for _, format := range []string{"json", "text"} {
		b.Run(format, func(b *testing.B) {
			var wall, cpu time.Duration
			var anon, peak int64
			for b.Loop() {
				cmd := showBenchCmd(b, dir, id, format)
				devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
				if err != nil {
					b.Fatal(err)
				}
				var errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = devnull, &errb
				start := time.Now()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				stop := make(chan struct{})
				sampled := make(chan [2]int64)
				go sampleRSS(cmd.Process.Pid, stop, sampled)
				err = cmd.Wait()
				wall += time.Since(start)
				close(stop)
				s := <-sampled
				devnull.Close()
				if err != nil || errb.Len() > 0 {
					b.Fatalf("scrim show: %v %s", err, errb.String())
				}
				anon = max(anon, s[0])
				peak = max(peak, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss*1024)
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			b.ReportMetric(float64(wall)/float64(time.Millisecond)/float64(b.N), "wall-ms/op")
			b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(anon)/(1<<20), "peak-anon-MiB")
			b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
		})
	}
}

func showBenchCmd(b *testing.B, dir, id, format string) *exec.Cmd {
	args := []string{"--store", dir, "show", id, "--format", format}
	if bin := os.Getenv("SCRIM_BENCH_BIN"); bin != "" {
		cmd := scrimProcess(b, args...)
		cmd.Path, cmd.Args = bin, append([]string{bin}, args...)
		return cmd
	}
	return scrimProcess(b, args...)
}

// bigStore is a store holding one generated session of n messages: the
// one kept in SCRIM_BENCH_STORE if it is there, else written (there, or in
// a temporary folder).
func bigStore(b *testing.B, n int) (dir, id string) {
	dir = os.Getenv("SCRIM_BENCH_STORE")
	if dir == "" {
		dir = filepath.Join(b.TempDir(), "store")
		return dir, writeBigSession(b, dir, n)
	}
	if st, err := session.Open(dir); err == nil {
		list, _, err := st.List()
		st.Close()
		if err == nil && len(list) == 1 && list[0].Count == uint64(n) {
			return dir, list[0].ID
		}
		if err == nil && len(list) > 0 {
			b.Fatalf("SCRIM_BENCH_STORE %s holds other sessions; give an empty or new folder", dir)
		}
	}
	return dir, writeBigSession(b, dir, n)
}
