package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/redact"
	"github.com/scrim-dev/scrim/session"
)

// TestBashTagsWhatItReads: a command's output is attributed to the files it
// read — per file where the output names them — and a limited model's
// command that names a denied path is refused before anything runs.
func TestBashTagsWhatItReads(t *testing.T) {
	root := tempTree(t, map[string]string{
		"a.txt":          "alpha needle\n",
		"b.txt":          "beta\n",
		"secrets/key":    "needle-SECRET\n",
		"src/x.go":       "package x // needle\n",
		"public/link":    "->../secrets/key",
		"notes/todo.txt": "none\n",
	})
	trusted := envFor(t, "trusted/m", root)
	limited := envFor(t, "limited/m", root)
	key, a := filepath.Join(root, "secrets/key"), filepath.Join(root, "a.txt")

	t.Run("one file, tagged", func(t *testing.T) {
		m := runTool(t, "bash", trusted, map[string]any{"command": "sed -n '1,5p' a.txt"}).Message
		if strings.Join(m.Meta.SourcePaths, " ") != a || m.Parts[0].SourcePath != a || m.Parts[len(m.Parts)-1].Text != "[exit code 0]" {
			t.Fatalf("parts %+v meta %+v", m.Parts, m.Meta)
		}
	})
	t.Run("a search is cut per file", func(t *testing.T) {
		m := runTool(t, "bash", trusted, map[string]any{"command": "grep -rn needle . | sort"}).Message
		got := map[string]string{}
		for _, p := range m.Parts {
			got[p.SourcePath] += p.Text
		}
		if !strings.Contains(got[key], "needle-SECRET") || strings.Contains(got[a], "SECRET") || !strings.Contains(got[a], "alpha") {
			t.Fatalf("parts %+v", m.Parts)
		}
		// Redacted for the limited model, which sees the other files.
		out, _ := redact.History([]session.Message{m}, "limited/m", limited.Policy)
		sent := out[0].Text()
		if strings.Contains(sent, "SECRET") || !strings.Contains(sent, "alpha needle") || !strings.Contains(sent, `[Content from `+key+` filtered`) {
			t.Fatalf("sent %q", sent)
		}
	})
	t.Run("a script is of unknown source", func(t *testing.T) {
		os.WriteFile(filepath.Join(root, "run.sh"), []byte("cat secrets/key\n"), 0o755)
		m := runTool(t, "bash", trusted, map[string]any{"command": "bash run.sh"}).Message
		if m.Meta.SourcePaths != nil || !strings.Contains(m.Meta.UnknownSource, "run.sh") {
			t.Fatalf("meta %+v", m.Meta)
		}
	})
	t.Run("no file, no sourcePaths", func(t *testing.T) {
		m := runTool(t, "bash", trusted, map[string]any{"command": "echo hi && ls notes"}).Message
		if m.Meta.SourcePaths != nil || !m.Meta.NoFiles {
			t.Fatalf("meta %+v", m.Meta)
		}
	})
	for _, cmd := range []string{"cat secrets/key .env", "head -n 1 public/link", "cd secrets && cat key", "python3 secrets/key", "grep -rn x secrets"} {
		t.Run("refused: "+cmd, func(t *testing.T) {
			marker := filepath.Join(root, "ran")
			r := runTool(t, "bash", limited, map[string]any{"command": cmd + "; touch " + marker})
			if !r.Denied || !r.Message.IsError || !strings.Contains(r.Message.Text(), `read denied: trust tier "limited" does not have read access to `+filepath.Join(root, "secrets")) {
				t.Fatalf("denied %v: %q", r.Denied, r.Message.Text())
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the refused command ran")
			}
		})
	}
	t.Run("allowed for the limited model", func(t *testing.T) {
		r := runTool(t, "bash", limited, map[string]any{"command": "cat a.txt b.txt"})
		if r.Denied || r.Message.IsError || len(r.Message.Meta.SourcePaths) != 2 {
			t.Fatalf("%+v", r)
		}
	})
}
