//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTildeMeansHome: a path that reaches scrim with its ~ (--store=~/x,
// which the shell leaves, or a quoted one, or $SCRIM_STORE="~/x") is the
// home folder's, for the store, the policy, the providers file, check's
// DIR, import's PATH, new's --workdir and export's -o.
// Taken literally, it had made a folder "~" in the current one and put the
// store there.
func TestTildeMeansHome(t *testing.T) {
	t.Parallel()
	home := testEnv(t)["HOME"]
	cwd := t.TempDir()
	run := func(env []string, args ...string) string {
		t.Helper()
		cmd := scrimProcess(t, args...)
		cmd.Dir = cwd
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("scrim %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	id := strings.TrimSpace(run(nil, "--store=~/st", "new", "--title", "tilde"))
	if _, err := os.Stat(filepath.Join(home, "st", "MANIFEST")); err != nil {
		t.Fatalf("no store in the home folder: %v", err)
	}
	if out := run([]string{"SCRIM_STORE=~/st"}, "sessions"); !strings.Contains(out, "tilde") {
		t.Errorf("$SCRIM_STORE=~/st lists another store:\n%s", out)
	}
	must(t, os.WriteFile(filepath.Join(home, "p.toml"), []byte("default_tier = \"t\"\n[tiers.t]\nlabel = \"t\"\nread = [\"/**\"]\n"), 0o644))
	if out := run(nil, "--policy=~/p.toml", "policy", "check"); !strings.Contains(out, filepath.Join(home, "p.toml")) {
		t.Errorf("--policy=~/p.toml is not the home folder's:\n%s", out)
	}
	if out := run([]string{"SCRIM_POLICY=~/p.toml"}, "policy", "check"); !strings.Contains(out, filepath.Join(home, "p.toml")) {
		t.Errorf("$SCRIM_POLICY=~/p.toml is not the home folder's:\n%s", out)
	}
	run(nil, "--store=~/st", "export", id, "-o", "~/out.md")
	if _, err := os.Stat(filepath.Join(home, "out.md")); err != nil {
		t.Errorf("export -o ~/out.md: %v", err)
	}
	if out := run(nil, "check", "~/st"); !strings.Contains(out, "ok:") {
		t.Errorf("check ~/st:\n%s", out)
	}
	must(t, os.Mkdir(filepath.Join(home, "wd"), 0o755))
	wid := strings.TrimSpace(run(nil, "--store=~/st", "new", "--title", "w", "--workdir=~/wd"))
	if out := run(nil, "--store=~/st", "show", wid); !strings.Contains(out, "workdir "+filepath.Join(home, "wd")+"\n") {
		t.Errorf("new --workdir=~/wd:\n%s", out)
	}
	transcript, err := os.ReadFile(filepath.Join("..", "..", "session", "importers", "claude", "testdata", "session.jsonl"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(home, "t.jsonl"), transcript, 0o644))
	if out := run(nil, "--store=~/st", "import", "claude", "~/t.jsonl"); !strings.Contains(out, "→ session") {
		t.Errorf("import claude ~/t.jsonl:\n%s", out)
	}
	cmd := scrimProcess(t, "--providers=~/missing.toml", "models")
	cmd.Dir = cwd
	if out, _ := cmd.CombinedOutput(); !strings.Contains(string(out), filepath.Join(home, "missing.toml")+": cannot read providers file") {
		t.Errorf("--providers=~/missing.toml is not the home folder's:\n%s", out)
	}
	if es, _ := os.ReadDir(cwd); len(es) != 0 {
		t.Errorf("made in the current folder: %v", es)
	}
}
