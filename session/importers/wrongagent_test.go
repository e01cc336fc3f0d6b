package importers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/claude"
	"github.com/scrim-dev/scrim/session/importers/codex"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// The import command's files are checked before they are read: another
// agent's transcript says which command reads it, and a file that is not
// JSON lines says so; neither "imports" as nothing with every line skipped.
func TestWrongAgentOrNotATranscript(t *testing.T) {
	goFile := filepath.Join(t.TempDir(), "app.go")
	os.WriteFile(goFile, []byte("package main\n\nfunc main() {}\n"), 0o600)
	for _, c := range []struct {
		agent   string
		factory importers.Factory
		file    string
		want    string
	}{
		{codex.Agent, codex.New, agents[0].fixture, "looks like a Claude Code transcript, not a Codex one: scrim import claude "},
		{claude.Agent, claude.New, agents[1].fixture, "looks like a Codex transcript, not a Claude Code one: scrim import codex "},
		{claude.Agent, claude.New, goFile, "is not a JSON-lines transcript (its first line is not JSON)"},
		{claude.Agent, claude.New, "gemini/testdata/session-2025-10-01T10-00-rewind.jsonl", "looks like a Gemini CLI transcript, not a Claude Code one: scrim import gemini "},
	} {
		st := importtest.Store(t)
		var got error
		importers.ImportFiles(st, c.agent, []string{c.file}, c.factory, 1, func(_ int, _ importers.Result, err error) { got = err })
		if got == nil || !strings.Contains(got.Error(), c.want) {
			t.Errorf("%s as %s: %v, want %q", c.file, c.agent, got, c.want)
		}
		if hs, _, _ := st.List(); len(hs) != 0 {
			t.Errorf("%s as %s made %d sessions", c.file, c.agent, len(hs))
		}
	}
	// The right agent still imports them, and as many messages from a copy
	// an editor saved with a byte order mark at its start.
	for _, a := range agents {
		st := importtest.Store(t)
		var plain importers.Result
		importers.ImportFiles(st, a.name, []string{a.fixture}, a.factory, 1, func(_ int, r importers.Result, err error) {
			if err != nil || r.Messages == 0 {
				t.Errorf("%s: %+v, %v", a.name, r, err)
			}
			plain = r
		})
		b, err := os.ReadFile(a.fixture)
		if err != nil {
			t.Fatal(err)
		}
		bom := filepath.Join(t.TempDir(), filepath.Base(a.fixture))
		os.WriteFile(bom, append([]byte("\ufeff"), b...), 0o600)
		st = importtest.Store(t)
		importers.ImportFiles(st, a.name, []string{bom}, a.factory, 1, func(_ int, r importers.Result, err error) {
			if err != nil || r.Messages != plain.Messages || r.Skipped != plain.Skipped {
				t.Errorf("%s with a byte order mark: %+v, %v; want %d messages, %d lines skipped", a.name, r, err, plain.Messages, plain.Skipped)
			}
		})
	}
}
