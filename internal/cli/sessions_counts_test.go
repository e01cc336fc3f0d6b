//go:build unix

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSessionsCounts: scrim sessions --model M says what M would be sent of
// each session, keeps the counts in the store (the second listing reads
// them), counts again after a policy change, and counts new messages.
func TestSessionsCounts(t *testing.T) {
	t.Parallel()
	isolate(t)
	f := newShellTree(t)
	tr := &transcript{}
	tr.claudeBash(f.ws, "toolu_1", "cat .env", f.sh(t, "cat .env"), false)
	tr.claudeBash(f.ws, "toolu_2", "cat src/app.go", f.sh(t, "cat src/app.go"), false)
	file := tr.write(t, filepath.Join(f.root, "s.jsonl"))
	base := []string{"--store", f.store, "--policy", f.policy}
	if _, stderr, code := scrim(t, "", append(base, "import", "claude", file)...); code != exitOK {
		t.Fatalf("import: %s", stderr)
	}
	type row struct {
		ID       string `json:"id"`
		Messages uint64 `json:"messages"`
		Counts   *struct {
			Tier             string   `json:"tier"`
			Messages         uint64   `json:"messages"`
			RedactedMessages int      `json:"redactedMessages"`
			DeniedPaths      []string `json:"deniedPaths"`
			Kept             bool     `json:"kept"`
		} `json:"counts"`
	}
	list := func(extra ...string) row {
		t.Helper()
		out, stderr, code := scrim(t, "", append(append(base, "sessions", "--format", "json"), extra...)...)
		var rows []row
		if code != exitOK || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 {
			t.Fatalf("sessions: exit %d %s\n%s", code, stderr, out)
		}
		return rows[0]
	}
	if r := list(); r.Counts != nil {
		t.Fatalf("counts without --model: %+v", r.Counts)
	}
	first := list("--model", "openai/limited")
	c := first.Counts
	if c == nil || c.Tier != "limited" || c.Messages != first.Messages || c.RedactedMessages != 1 ||
		len(c.DeniedPaths) != 1 || c.DeniedPaths[0] != filepath.Join(f.ws, ".env") || c.Kept {
		t.Fatalf("first count: %+v", c)
	}
	if again := list("--model", "openai/limited"); !again.Counts.Kept || again.Counts.RedactedMessages != 1 {
		t.Fatalf("the second listing did not read the kept count: %+v", again.Counts)
	}
	if trusted := list("--model", "demo/trusted"); trusted.Counts.Kept || trusted.Counts.RedactedMessages != 0 {
		t.Fatalf("another tier: %+v", trusted.Counts)
	}

	// A policy change: src/ denied too. The kept count no longer holds.
	text, err := os.ReadFile(f.policy)
	must(t, err)
	must(t, os.WriteFile(f.policy, []byte(strings.Replace(string(text), `"**/secrets/**"]`, `"**/secrets/**", "**/src/**"]`, 1)), 0o644))
	if changed := list("--model", "openai/limited"); changed.Counts.Kept || changed.Counts.RedactedMessages != 2 {
		t.Fatalf("after the policy changed: %+v", changed.Counts)
	}

	// New messages: counted on top of the kept count.
	tr.claudeBash(f.ws, "toolu_3", "cat secrets/x.txt", f.sh(t, "cat secrets/x.txt"), false)
	tr.write(t, file)
	if _, stderr, code := scrim(t, "", append(base, "import", "claude", file)...); code != exitOK {
		t.Fatalf("import: %s", stderr)
	}
	grown := list("--model", "openai/limited")
	if grown.Counts.Kept || grown.Counts.Messages != grown.Messages || grown.Counts.RedactedMessages != 3 || len(grown.Counts.DeniedPaths) != 3 {
		t.Fatalf("after new messages: %d messages, %+v", grown.Messages, grown.Counts)
	}
	out, _, _ := scrim(t, "", append(base, "sessions", "--model", "openai/limited")...)
	if !strings.Contains(out, "REDACTED") || !strings.Contains(out, "DENIED PATHS") {
		t.Fatalf("text listing with --model:\n%s", out)
	}
}
