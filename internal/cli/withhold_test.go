//go:build unix

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/session"
)

const withholdPolicy = `
default_tier = "cloud"

[tiers.local]
label = "local"
read  = ["/**"]
tools = ["read", "grep", "glob", "bash", "webfetch"]

[tiers.cloud]
label = "cloud"
read  = ["/**"]
deny  = ["**/secrets/**"]
unknown_source = "withhold"

[tiers.open]
label = "open"
read  = ["/**"]
deny  = ["**/secrets/**"]

[[models]]
match = "ollama/**"
tier  = "local"

[[models]]
match = "open/**"
tier  = "open"
`

type redactJSON struct {
	Messages []session.Message `json:"messages"`
	Report   struct {
		redact.Report
		Messages []redact.MessageReport `json:"messages"`
	} `json:"report"`
}

// With unknown_source = "withhold", imported results of unknown source
// (a script run through Bash, WebFetch, a subagent's answer) are sent as
// the exact placeholder; a tier without the key sends them as they are, and
// so does the first tier again after a switch back (nothing stored
// changed). scrim's own read-denied errors are not of unknown source, and
// the JSON report says, per message number, what happened.
func TestUnknownSourceWithheld(t *testing.T) {
	t.Parallel()
	isolate(t)
	root := t.TempDir()
	store, pol := filepath.Join(root, "store"), filepath.Join(root, "policy.toml")
	must(t, os.WriteFile(pol, []byte(withholdPolicy), 0o644))
	ws := filepath.Join(root, "ws")
	must(t, os.MkdirAll(filepath.Join(ws, "secrets"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "secrets", "k"), []byte("SECRET-K\n"), 0o644))

	tr := &transcript{}
	tr.claudeBash(ws, "toolu_1", "python3 report.py", "SCRIPT-OUTPUT\n", false)
	tr.claudeCall(ws, "toolu_2", "WebFetch", map[string]any{"url": "https://example.com"})
	tr.claudeResult(ws, "toolu_2", "WEB-PAGE", false, nil)
	tr.claudeCall(ws, "toolu_3", "Task", map[string]any{"prompt": "look"})
	tr.claudeResult(ws, "toolu_3", []any{map[string]any{"type": "text", "text": "SUBAGENT-ANSWER"}}, false, nil)
	tr.claudeBash(ws, "toolu_4", "echo KNOWN-ECHO", "KNOWN-ECHO\n", false)
	file := tr.write(t, filepath.Join(root, "t.jsonl"))
	base := []string{"--store", store, "--policy", pol}
	if out, stderr, code := scrim(t, "", append(base, "import", "claude", file)...); code != exitOK {
		t.Fatalf("import: %s %s", out, stderr)
	}
	id := importedSession(t, store, file)
	// A read the cloud tier is refused: scrim's own words, no file content.
	if _, _, code := scrim(t, "", append(base, "tool", "read", "--session", id, "--model", "anthropic/x", filepath.Join(ws, "secrets", "k"))...); code != exitRefused {
		t.Fatalf("the denied read exits %d", code)
	}

	// get returns the redact JSON for model and the text of what is sent.
	get := func(model string) (redactJSON, string) {
		out, stderr, code := scrim(t, "", append(base, "redact", id, "--model", model, "--format", "json")...)
		if code != exitOK {
			t.Fatalf("redact: %s", stderr)
		}
		var doc redactJSON
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		var sent strings.Builder
		for _, m := range doc.Messages {
			sent.WriteString(m.Text() + "\n")
		}
		return doc, sent.String()
	}
	ph := redact.Withheld("cloud")
	if ph != `[Content of unknown source withheld — trust tier "cloud" accepts only content whose source is known]` {
		t.Fatalf("placeholder %q", ph)
	}
	doc, raw := get("anthropic/x")
	for _, leak := range []string{"SCRIPT-OUTPUT", "WEB-PAGE", "SUBAGENT-ANSWER", "SECRET-K"} {
		if strings.Contains(raw, leak) {
			t.Fatalf("cloud is sent %q", leak)
		}
	}
	if strings.Count(raw, ph) != 3 || !strings.Contains(raw, "KNOWN-ECHO") || !strings.Contains(raw, "read denied: trust tier") {
		t.Fatalf("cloud: %d placeholders, echo or the refusal missing:\n%s", strings.Count(raw, ph), raw)
	}
	rep := doc.Report
	if rep.Withheld != 3 || rep.UnknownSource != 0 {
		t.Fatalf("report: withheld %d, unknown source %d (the read-denied error must not count)", rep.Withheld, rep.UnknownSource)
	}
	var lines []string
	for _, m := range rep.Messages {
		why := "-"
		if m.UnknownSource != nil {
			why = *m.UnknownSource
		}
		lines = append(lines, fmt.Sprintf("#%d withheld=%v %s", m.Seq, m.Withheld, why))
	}
	want := []string{
		"#2 withheld=true the command runs the python3 script report.py, which may read anything",
		"#4 withheld=true content fetched from the web",
		"#6 withheld=true a subagent's answer, which may repeat what it read",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("per message:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}

	// A tier without the key sends them, and reports them as unchecked.
	open, raw := get("open/x")
	if strings.Contains(raw, ph) || !strings.Contains(raw, "SCRIPT-OUTPUT") || open.Report.UnknownSource != 3 || open.Report.Withheld != 0 {
		t.Fatalf("open tier: unknown %d withheld %d\n%s", open.Report.UnknownSource, open.Report.Withheld, raw)
	}
	// Back to cloud: withheld again; nothing stored changed.
	if _, raw := get("anthropic/x"); strings.Count(raw, ph) != 3 {
		t.Fatal("switching back does not withhold again")
	}
	// The text report points at the message numbers too.
	out, _, _ := scrim(t, "", append(base, "redact", id, "--model", "anthropic/x")...)
	if !strings.Contains(out, "    #2     unknown source (the command runs the python3 script report.py, which may read anything): withheld") ||
		!strings.Contains(out, "  withheld: 3 results of unknown source") {
		t.Fatalf("text report:\n%s", out)
	}
}
