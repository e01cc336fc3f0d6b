//go:build unix

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/ui"
)

const teamPolicy = `
default_tier = "limited"

[tiers.trusted]
label = "trusted"
read  = ["/**"]

[tiers.limited]
label = "limited"
read  = ["%s/**"]
deny  = ["**/.env"]
deny_files = ["*"]

[[models]]
match = "demo/trusted"
tier  = "trusted"
`

// TestTeamFileRedaction: a session whose grep read a file that only a
// .cursorignore line denies is sent with that file's lines replaced to a tier
// with deny_files = ["*"]; the report, policy explain, policy check --dir and
// the TUI's e name the file and its line.
func TestTeamFileRedaction(t *testing.T) {
	t.Parallel()
	isolate(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	ws, store, pol := filepath.Join(root, "ws"), filepath.Join(root, "store"), filepath.Join(root, "policy.toml")
	for name, text := range map[string]string{
		".cursorignore":      "# Cursor: what the assistant may not see\n\nprivate/\n",
		"private/plan.md":    "denied-plan-1 TOKEN rotation is on the 3rd\n",
		"private/more/x.txt": "denied-x-1 TOKEN\n",
		"src/app.go":         "package app // allowed-app-1 TOKEN\n",
	} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755))
		must(t, os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644))
	}
	must(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
	must(t, os.WriteFile(pol, []byte(fmt.Sprintf(teamPolicy, ws)), 0o644))

	tr := &transcript{}
	tr.claude(ws, map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "where is TOKEN used?"}})
	tr.claudeBash(ws, "toolu_1", "rg -n TOKEN private/more", "private/more/x.txt:1:denied-x-1 TOKEN\n", false)
	tr.claudeCall(ws, "toolu_2", "Grep", map[string]any{"pattern": "TOKEN", "output_mode": "content", "-n": true})
	out := ws + "/src/app.go:1:package app // allowed-app-1 TOKEN\n" + ws + "/private/plan.md:1:denied-plan-1 TOKEN rotation is on the 3rd"
	tr.claudeResult(ws, "toolu_2", out, false, map[string]any{"mode": "content", "numFiles": 2, "filenames": []any{}, "content": out})
	file := tr.write(t, filepath.Join(root, "team.jsonl"))
	if _, stderr, code := scrim(t, "", "--store", store, "--policy", pol, "import", "claude", file); code != exitOK {
		t.Fatalf("import: %s", stderr)
	}
	id := importedSession(t, store, file)

	limited, stderr, code := scrim(t, "", "--store", store, "--policy", pol, "redact", id, "--model", "openai/limited")
	if code != exitOK {
		t.Fatalf("redact: %s", stderr)
	}
	if strings.Contains(limited, "denied-") {
		t.Fatalf("BYPASS: the limited tier is sent what .cursorignore denies:\n%s", limited)
	}
	for _, want := range []string{
		"allowed-app-1",
		`[Content from ` + ws + `/private/plan.md filtered — trust tier "limited" does not have read access]`,
		ws + "/private/plan.md  — denied by " + ws + "/.cursorignore:3 (private/)",
		ws + "/private/more/x.txt  — denied by " + ws + "/.cursorignore:3 (private/)",
	} {
		if !strings.Contains(limited, want) {
			t.Errorf("redact output lacks %q:\n%s", want, limited)
		}
	}
	trusted, _, _ := scrim(t, "", "--store", store, "--policy", pol, "redact", id, "--model", "demo/trusted")
	if !strings.Contains(trusted, "denied-plan-1") {
		t.Fatalf("the trusted tier is not sent the file, so the test proves nothing:\n%s", trusted)
	}

	js, _, _ := scrim(t, "", "--store", store, "--policy", pol, "redact", id, "--model", "openai/limited", "--format", "json")
	var doc struct {
		Report struct {
			DeniedPaths []struct{ Path, File, Reason string }
		}
	}
	must(t, json.Unmarshal([]byte(js), &doc))
	if len(doc.Report.DeniedPaths) != 2 || doc.Report.DeniedPaths[0].File != ws+"/.cursorignore" {
		t.Errorf("JSON report's denied paths %+v, want both naming %s/.cursorignore", doc.Report.DeniedPaths, ws)
	}

	exp, _, _ := scrim(t, "", "--store", store, "--policy", pol, "policy", "explain", "--model", "openai/limited", ws+"/private/plan.md", ws+"/src/app.go")
	if !strings.Contains(exp, ws+`/private/plan.md: denied for tier "limited" by `+ws+"/.cursorignore:3 (private/)") ||
		!strings.Contains(exp, ws+`/src/app.go: allowed for tier "limited"`) {
		t.Errorf("policy explain:\n%s", exp)
	}
	check, stderr, code := scrim(t, "", "--policy", pol, "policy", "check", "--dir", ws+"/src")
	if code != exitOK || !strings.Contains(check, "team files for "+ws+"/src (repository root "+ws+")") ||
		!regexp.MustCompile(regexp.QuoteMeta(ws+"/.cursorignore")+` +Cursor +1 rule\n`).MatchString(check) ||
		!strings.Contains(check, "tiers that read them: limited (deny_files, line 12)") {
		t.Errorf("policy check --dir: exit %d %s\n%s", code, stderr, check)
	}

	// The TUI's e on the grep's result names the line.
	lipgloss.SetColorProfile(termenv.Ascii)
	st, err := session.Open(store)
	must(t, err)
	defer st.Close()
	p, err := (&app{policyFile: pol}).Policy()
	must(t, err)
	var last atomic.Value
	last.Store("")
	var frames []string
	m := framed{Model: ui.New(ui.Config{Store: st, StoreDir: store, Policy: p, Model: "demo/limited",
		Models: []ui.ModelChoice{{ID: "demo/trusted"}, {ID: "demo/limited"}}}), last: &last, frames: &frames}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(200, 50))
	wait := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(flat(last.Load().(string)), want) {
			if time.Now().After(deadline) {
				t.Fatalf("no frame shows %q; last:\n%s", want, last.Load())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	wait("does not have read access")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("G")})
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("e")})
	wait(".cursorignore:3 (private/)")
	must(t, tm.Quit())
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}

// flat joins a frame's lines, borders off, so that text a dialog wrapped at
// a space is found whole.
func flat(frame string) string {
	var parts []string
	for _, line := range strings.Split(frame, "\n") {
		if line = strings.Trim(line, " │┃"); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, " ")
}
