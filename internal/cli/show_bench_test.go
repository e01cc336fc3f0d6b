//go:build unix

package cli

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
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
			benchProcess(b, "--store", dir, "show", id, "--format", format)
		})
	}
}

// bigPolicy denies one package of the generated session's project (2 % of
// its reads) to both tiers; cloud also redacts derived content and
// credentials, like the built-in cloud tier.
const bigPolicy = `
default_tier = "cloud"

[tiers.cloud]
label   = "cloud"
read    = ["/**"]
deny    = ["/home/dev/src/app/pkg3/**"]
derived = "redact"
secrets = "redact"

[tiers.paths]
label = "paths only"
read  = ["/**"]
deny  = ["/home/dev/src/app/pkg3/**"]

[[models]]
match = "paths/*"
tier  = "paths"
`

// BenchmarkRedactProcess runs `scrim redact SESSION --model M --format json
// > /dev/null` as BenchmarkShowProcess runs show, on the same session: for a
// tier that only filters paths, and for one that also redacts derived
// content and credentials (the findings in the store: a first preview,
// unmeasured, stores them).
func BenchmarkRedactProcess(b *testing.B) {
	n := benchMessages(b)
	dir, id := bigStore(b, n)
	pol := filepath.Join(b.TempDir(), "policy.toml")
	if err := os.WriteFile(pol, []byte(bigPolicy), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d messages, store %s", n, dir)
	warm := benchScrim(b, "--store", dir, "--policy", pol, "redact", id, "--model", "anthropic/x", "--format", "json")
	var errb bytes.Buffer
	warm.Stderr = &errb // and the output to the null device
	if err := warm.Run(); err != nil {
		b.Fatalf("scrim redact: %v %s", err, errb.String())
	}
	for _, model := range []string{"paths/x", "anthropic/x"} {
		b.Run(strings.Split(model, "/")[0], func(b *testing.B) {
			benchProcess(b, "--store", dir, "--policy", pol, "redact", id, "--model", model, "--format", "json")
		})
	}
}

// BenchmarkSendProcess runs `scrim send SESSION --model gw/m --continue` on
// a copy of BenchmarkShowProcess's session, to a loopback provider that
// reads the whole body and answers in a line, for the tier with derived
// and credentials on: what a send holds is the request's batches, never
// the session (it loaded all of it, 4.5 GiB at a million messages). Each
// run appends the answer, so each builds its request, and its gathering,
// anew. body-MB is what the provider received.
func BenchmarkSendProcess(b *testing.B) {
	n := benchMessages(b)
	src, id := bigStore(b, n)
	dir := filepath.Join(b.TempDir(), "store")
	if out, err := exec.Command("cp", "-R", src, dir).CombinedOutput(); err != nil {
		b.Fatalf("copy the store: %v %s", err, out)
	}
	var body atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ := io.Copy(io.Discard, r.Body)
		body.Store(got)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\n")
		io.WriteString(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	pol := filepath.Join(b.TempDir(), "policy.toml")
	provs := filepath.Join(b.TempDir(), "providers.toml")
	if err := os.WriteFile(pol, []byte(bigPolicy), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(provs, []byte("[providers.gw]\nbase_url = \""+srv.URL+"/v1\"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	benchProcess(b, "--store", dir, "--policy", pol, "--providers", provs, "send", id, "--model", "gw/m", "--continue")
	b.ReportMetric(float64(body.Load())/1e6, "body-MB")
}

// benchProcess runs scrim with args, output to /dev/null, b.N times, and
// reports the means of wall and CPU time and the peaks of anonymous and
// resident memory.
func benchProcess(b *testing.B, args ...string) {
	var wall, cpu time.Duration
	var anon, peak int64
	for b.Loop() {
		cmd := benchScrim(b, args...)
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
			b.Fatalf("scrim %s: %v %s", strings.Join(args, " "), err, errb.String())
		}
		anon = max(anon, s[0])
		peak = max(peak, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss*1024)
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	b.ReportMetric(float64(wall)/float64(time.Millisecond)/float64(b.N), "wall-ms/op")
	b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(anon)/(1<<20), "peak-anon-MiB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
}

// benchScrim is scrim with args: the binary SCRIM_BENCH_BIN names, if set
// (to compare revisions), else this one.
func benchScrim(b *testing.B, args ...string) *exec.Cmd {
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
