package importers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/claude"
	"github.com/scrim-dev/scrim/session/importers/codex"
	"github.com/scrim-dev/scrim/session/importers/importtest"
)

// TestPathsAreCanonical: relative paths resolve against the line's working
// folder, symlinks are resolved, and a file that no longer exists is still
// recorded, canonical as far as it exists.
func TestPathsAreCanonical(t *testing.T) {
	root, err := policy.Canonical(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(root, "real", "proj")
	os.MkdirAll(filepath.Join(real, "src"), 0o700)
	os.WriteFile(filepath.Join(real, "src", "a.go"), []byte("package a"), 0o600)
	if err := os.Symlink(real, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(real, "src", "a.go")
	for _, tc := range []struct {
		agent   string
		factory importers.Factory
		fixture string
		want    []string
	}{
		{claude.Agent, claude.New, "claude/testdata/symlinks.jsonl", []string{
			"assistant model=anthropic/claude-sonnet-4-5 parts=[call:t1:Read call:t2:Read call:t3:Grep] paths=nil",
			"tool read model=anthropic/claude-sonnet-4-5 parts=[from:" + a + "] paths=[" + a + "]",
			"tool read model=anthropic/claude-sonnet-4-5 parts=[from:" + real + "/src/gone/old.go] paths=[" + real + "/src/gone/old.go]",
			"tool grep model=anthropic/claude-sonnet-4-5 parts=[from:" + a + "] paths=[" + a + "]",
		}},
		{codex.Agent, codex.New, "codex/testdata/symlinks.jsonl", []string{
			"assistant parts=[call:c1:shell] paths=nil",
			"tool bash parts=[from:" + a + "] paths=[" + a + "]",
		}},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			raw, err := os.ReadFile(tc.fixture)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(root, tc.agent+".jsonl")
			os.WriteFile(file, []byte(strings.ReplaceAll(string(raw), "@ROOT@", root)), 0o600)
			st := importtest.Store(t)
			res := importFile(t, st, tc.agent, file, tc.factory)
			msgs, _, _ := st.Messages(res.SessionID)
			importtest.Compare(t, msgs, tc.want)
		})
	}
}
