package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/session"
)

// BenchmarkSessionsProcess10k runs the real scrim binary, as a user would,
// over a store of 10,000 sessions with 10 messages each (about 100 MB).
func BenchmarkSessionsProcess10k(b *testing.B) {
	dir := b.TempDir()
	seedSessions(b, dir, 10_000, 10)
	bin := filepath.Join(b.TempDir(), "scrim")
	build := exec.Command("go", "build", "-o", bin, "github.com/scrim-dev/scrim")
	build.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	var cpu time.Duration
	b.ResetTimer()
	for b.Loop() {
		var out, errb bytes.Buffer
		cmd := exec.Command(bin, "--store", dir, "sessions")
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil || errb.Len() > 0 {
			b.Fatalf("scrim sessions: %v %s", err, errb.String())
		}
		if n := strings.Count(out.String(), "\n"); n != 10_001 {
			b.Fatalf("%d lines", n)
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// seedSessions fills dir with n sessions of per messages each, from several
// goroutines so that Badger can group their synced commits.
func seedSessions(b testing.TB, dir string, n, per int) {
	st, err := session.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	text := strings.Repeat("1\tfunc main() {\n\t\tfmt.Println(\"hello\")\n}\n", 40)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				h, err := st.Create(session.Header{Title: fmt.Sprintf("session %d: fix the flaky test", i)})
				if err != nil {
					errs <- err
					return
				}
				msgs := make([]*session.Message, per)
				for j := range msgs {
					msgs[j] = &session.Message{Role: session.RoleTool, Tool: "read", Model: "anthropic/claude-sonnet-4-5",
						Parts: []session.Part{{Kind: session.PartToolResult, Text: text, SourcePath: "/src/main.go"}},
						Meta:  session.Meta{SourcePaths: []string{"/src/main.go"}}}
				}
				msgs[per-1].Role = session.RoleAssistant
				if err := st.Append(h.ID, msgs...); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}
