package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/runner"
	"github.com/scrim-dev/scrim/session"
)

func seededDemo(t *testing.T) *demo {
	t.Helper()
	dir := t.TempDir()
	d, err := buildDemo(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.store.Close() })
	return d
}

func TestDemoSeedsSessionsWithTheRealTools(t *testing.T) {
	t.Parallel()
	isolate(t)
	d := seededDemo(t)
	hs, _, err := d.store.List()
	if err != nil {
		t.Fatal(err)
	}
	titles := map[string]session.Header{}
	for _, h := range hs {
		titles[h.Title] = h
	}
	for _, want := range []string{"Tour of the project", "How big is it?", "A limited model at work", "Reading through the shell", "Where is the API key used?"} {
		if titles[want].Count == 0 {
			t.Fatalf("no session %q with messages; have %v", want, hs)
		}
	}
	if hs[0].Title != "Where is the API key used?" {
		t.Fatalf("the most recent session (the one the TUI opens) is %q", hs[0].Title)
	}

	// Every sourcePath is canonical: absolute, clean, symlinks resolved,
	// inside the extracted workspace; and it names a file that exists.
	ws, err := filepath.EvalSymlinks(d.workspace)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]int{}
	for _, h := range hs {
		msgs, _, err := d.store.Messages(h.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			tools[m.Tool]++
			for _, p := range m.Meta.SourcePaths {
				real, err := filepath.EvalSymlinks(p)
				if err != nil || real != p || !strings.HasPrefix(p, ws+string(filepath.Separator)) {
					t.Fatalf("%s: sourcePath %q is not canonical inside %s (%v)", h.Title, p, ws, err)
				}
			}
			if m.Tool == "glob" && !strings.Contains(string(inputOf(msgs, m.ToolCallID)), "content") && m.Meta.SourcePaths != nil {
				t.Fatalf("%s: %s result carries sourcePaths %v", h.Title, m.Tool, m.Meta.SourcePaths)
			}
		}
	}
	for _, tool := range []string{"read", "grep", "glob", "bash"} {
		if tools[tool] == 0 {
			t.Fatalf("no %s result in the demo", tool)
		}
	}
}

// The shell session: each command's output is tagged with the files it
// read, a search line by line; limited is sent the allowed lines and
// placeholders for .env and secrets/, trusted everything.
func TestDemoShellReadsAreTagged(t *testing.T) {
	t.Parallel()
	isolate(t)
	d := seededDemo(t)
	msgs := demoMessages(t, d, "Reading through the shell")
	ws, _ := filepath.EvalSymlinks(d.workspace)
	var grep, cat *session.Message
	for i := range msgs {
		m := &msgs[i]
		if m.Tool != "bash" {
			continue
		}
		if len(m.Meta.SourcePaths) == 0 {
			t.Fatalf("untagged bash result %q (%s)", m.Text(), m.Meta.UnknownSource)
		}
		switch {
		case strings.Contains(m.Text(), "src/config.go:") && m.Attributed():
			grep = m
		case strings.Contains(m.Text(), "DATABASE_URL"):
			cat = m
		}
	}
	if grep == nil || cat == nil {
		t.Fatalf("grep %v, cat %v", grep != nil, cat != nil)
	}
	req := runner.Build(msgs, "s", "demo/limited", d.pol)
	var sent strings.Builder
	for _, m := range req.History {
		sent.WriteString(m.Text() + "\n")
	}
	for _, leak := range []string{"sk-demo-local", "sk-demo-prod", "hunter2"} {
		if strings.Contains(sent.String(), leak) {
			t.Fatalf("limited is sent %q", leak)
		}
	}
	for _, want := range []string{`src/config.go:19:`, "[Content from " + filepath.Join(ws, ".env") + " filtered", "[Content from " + filepath.Join(ws, "secrets", "api.key") + " filtered"} {
		if !strings.Contains(sent.String(), want) {
			t.Fatalf("limited is not sent %q:\n%s", want, sent.String())
		}
	}
}

func inputOf(msgs []session.Message, callID string) []byte {
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Kind == session.PartToolCall && p.CallID == callID {
				return p.Input
			}
		}
	}
	return nil
}

// TestDemoShowsDerivedAndSecrets: the demo's limited tier replaces the
// quote of .env, the grep pattern that repeats it and the log's token; the
// trusted tier gets them all.
func TestDemoShowsDerivedAndSecrets(t *testing.T) {
	t.Parallel()
	isolate(t)
	d := seededDemo(t)
	msgs := demoMessages(t, d, "Quotes, commands and credentials")
	ws, _ := filepath.EvalSymlinks(d.workspace)
	sent := func(model string) (string, redact.Report) {
		req := runner.Build(msgs, "s", model, d.pol)
		var b strings.Builder
		for _, m := range req.History {
			for _, p := range m.Parts {
				b.WriteString(p.Text + string(p.Input) + "\n")
			}
		}
		return b.String(), req.Report
	}
	limited, rep := sent("demo/limited")
	for _, leak := range []string{"sk-demo-local-0000-NOT-REAL", "hunter2", "glpat-"} {
		if strings.Contains(limited, leak) {
			t.Fatalf("limited is sent %q:\n%s", leak, limited)
		}
	}
	if rep.Derived < 3 || rep.Secrets != 1 || len(rep.DerivedFrom) != 1 || rep.DerivedFrom[0].Path != filepath.Join(ws, ".env") || rep.SecretRules[0].Rule != "gitlab-pat" {
		t.Fatalf("report %+v", rep)
	}
	if trusted, rep := sent("demo/trusted"); !strings.Contains(trusted, "glpat-") || !strings.Contains(trusted, "hunter2") || rep.Derived+rep.Secrets != 0 {
		t.Fatalf("trusted is not sent everything: %+v", rep)
	}
}

func TestDemoReadThroughTheSymlinkRecordsTheTarget(t *testing.T) {
	t.Parallel()
	isolate(t)
	d := seededDemo(t)
	link := filepath.Join(d.workspace, "src", "deploy.key")
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("src/deploy.key should be a symlink: %v", err)
	}
	target, _ := filepath.EvalSymlinks(filepath.Join(d.workspace, "secrets", "deploy.key"))
	msgs := demoMessages(t, d, "Where is the API key used?")
	for _, m := range msgs {
		if m.Tool == "read" && len(m.Meta.SourcePaths) == 1 && m.Meta.SourcePaths[0] == target {
			if !strings.Contains(m.Text(), "BEGIN SCRIM DEMO KEY") {
				t.Fatalf("the read through the link has no key content: %q", m.Text())
			}
			return
		}
	}
	t.Fatalf("no read result attributed to %s", target)
}

func demoMessages(t *testing.T, d *demo, title string) []session.Message {
	t.Helper()
	hs, _, _ := d.store.List()
	for _, h := range hs {
		if h.Title == title {
			msgs, _, err := d.store.Messages(h.ID)
			if err != nil {
				t.Fatal(err)
			}
			return msgs
		}
	}
	t.Fatalf("no session %q", title)
	return nil
}

// What the TUI's sent pane shows is runner.Build's output: limited gets
// placeholders naming its tier, trusted gets everything, public gets the
// docs only.
func TestDemoTiersSeeWhatThePolicySays(t *testing.T) {
	t.Parallel()
	isolate(t)
	d := seededDemo(t)
	msgs := demoMessages(t, d, "Where is the API key used?")
	secret := "sk-demo-prod-7f3a9b2c1d4e5f60"
	cases := []struct {
		model        string
		placeholders bool
		secretShown  bool
	}{
		{"demo/trusted", false, true},
		{"demo/limited", true, false},
		{"demo/public", true, false},
	}
	for _, c := range cases {
		t.Run(c.model, func(t *testing.T) {
			req := runner.Build(msgs, "s", c.model, d.pol)
			label := req.Tier.Label
			var sent strings.Builder
			n := 0
			for _, m := range req.History {
				for _, p := range m.Parts {
					sent.WriteString(p.Text)
					if p.Redacted {
						n++
						if !strings.Contains(p.Text, `trust tier "`+label+`" does not have read access`) {
							t.Fatalf("placeholder does not name tier %s: %q", label, p.Text)
						}
					}
				}
			}
			if (n > 0) != c.placeholders {
				t.Fatalf("%d placeholders for %s", n, c.model)
			}
			if strings.Contains(sent.String(), secret) != c.secretShown {
				t.Fatalf("secret shown to %s: %v", c.model, !c.secretShown)
			}
		})
	}
}

// The limited model's own tool runs are refused or skip denied files: the
// enforcement half of the demo.
func TestDemoLimitedModelIsRefused(t *testing.T) {
	t.Parallel()
	isolate(t)
	d := seededDemo(t)
	msgs := demoMessages(t, d, "A limited model at work")
	var refused, skipped, switched bool
	for _, m := range msgs {
		switch {
		case m.Role == session.RoleEvent && strings.Contains(m.Text(), "to demo/limited (tier limited)"):
			switched = true
		case m.Tool == "read" && m.Model == "demo/limited":
			refused = m.IsError && strings.Contains(m.Text(), `read denied: trust tier "limited"`)
			if strings.Contains(m.Text(), "sk-demo-prod") {
				t.Fatal("the limited model read the production key")
			}
		case m.Tool == "grep" && m.Model == "demo/limited":
			skipped = strings.Contains(m.Text(), "skipped")
			for _, p := range m.Meta.SourcePaths {
				if strings.Contains(p, "secrets") || strings.HasSuffix(p, ".env") {
					t.Fatalf("limited grep returned %s", p)
				}
			}
		}
	}
	if !refused || !skipped || !switched {
		t.Fatalf("refused %v, skipped %v, switch event %v", refused, skipped, switched)
	}
}

// `scrim demo` end to end: the TUI opens on the seeded store with
// demo/limited active (placeholders on the first screen), q quits, and the
// temporary folder is gone.
func TestDemoCommandOpensLimitedAndCleansUp(t *testing.T) {
	t.Parallel()
	isolate(t)
	tmp := t.TempDir()
	setenv(t, "TMPDIR", tmp)
	stdout := demoFirstScreen(t, []string{`trust tier "limited" does not have read`}, "demo")
	for _, want := range []string{"Sent to demo/limited", `trust tier "limited" does not have read`} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("first screen lacks %q:\n%s", want, stdout)
		}
	}
	left, _ := os.ReadDir(tmp)
	if len(left) != 0 {
		t.Fatalf("the demo left %v in the temp folder", left)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// demoFirstScreen runs scrim with args (a demo) in process on a 160x45
// screen, quits once the first screen with a session is drawn (its counts,
// and whatever else until names: the counts can come before the sent side
// is built), and returns all it drew.
func demoFirstScreen(t *testing.T, until []string, args ...string) string {
	t.Helper()
	setenv(t, "COLUMNS", "160")
	setenv(t, "LINES", "45")
	in, typeKeys := io.Pipe()
	out := &syncBuffer{}
	var errb bytes.Buffer
	done := make(chan int)
	go func() {
		done <- Main(args, Env{LookupEnv: lookup(t), Stdin: in, Stdout: out, Stderr: &errb})
	}()
	deadline := time.Now().Add(20 * time.Second)
	drawn := func() bool {
		s := out.String()
		for _, u := range append([]string{"messages redacted"}, until...) {
			if !strings.Contains(s, u) {
				return false
			}
		}
		return true
	}
	for !drawn() {
		if time.Now().After(deadline) {
			t.Fatalf("no first screen:\n%s\n%s", out.String(), errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	typeKeys.Write([]byte("q"))
	if code := <-done; code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	return out.String()
}
