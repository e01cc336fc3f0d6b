package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scrim-dev/scrim/internal/policytest"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// tempTree makes a folder with the given files (path → content; a content
// starting with "->" makes a symlink to the rest) and returns its canonical path.
func tempTree(t testing.TB, files map[string]string) string {
	t.Helper()
	root, err := policy.Canonical(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names) // targets before links does not matter: dangling links are fine
	for _, name := range names {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		content := files[name]
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func envFor(t testing.TB, model, workDir string) Env {
	return Env{Policy: policytest.Policy(t, policytest.Tiers), Model: model, WorkDir: workDir}
}

// runTool runs a registered tool with input marshalled from in.
func runTool(t testing.TB, name string, env Env, in any) Result {
	t.Helper()
	tool, ok := Lookup(name)
	if !ok {
		t.Fatalf("tool %q is not registered", name)
	}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	r := tool.Run(context.Background(), env, raw)
	if r.Message.Role != session.RoleTool || r.Message.Tool != name || r.Message.Model != env.Model {
		t.Fatalf("%s result has role %q tool %q model %q", name, r.Message.Role, r.Message.Tool, r.Message.Model)
	}
	if err := r.Message.Validate(); err != nil {
		t.Fatalf("%s result does not validate: %v", name, err)
	}
	return r
}

func canon(t testing.TB, p string) string {
	t.Helper()
	c, err := policy.Canonical(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// text runs a tool and returns its result's text.
func text(t testing.TB, name string, env Env, in any) string {
	t.Helper()
	m := runTool(t, name, env, in).Message
	return m.Text()
}
