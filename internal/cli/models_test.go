package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestModelsCommand(t *testing.T) {
	t.Parallel()
	isolate(t)
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.toml")
	if err := os.WriteFile(pol, []byte(`default_tier = "public"
[tiers.local]
label = "on this machine"
read = ["/**"]
[tiers.public]
label = "public"
read = []
[[models]]
match = "ollama/**"
tier = "local"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	provs := filepath.Join(dir, "providers.toml")
	if err := os.WriteFile(provs, []byte("[providers.ollama]\nbase_url = \"http://127.0.0.1:11434/v1\"\nmodels = [\"llama3.1:8b\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	setenv(t, "GROQ_API_KEY", "")
	base := []string{"--store", filepath.Join(dir, "store"), "--policy", pol, "--providers", provs}

	stdout, stderr, code := scrim(t, "", append(base, "models", "--format", "json")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var models []struct {
		ID, Provider, Source, Tier, TierLabel, KeyEnv string
		Ready                                         bool
	}
	if err := json.Unmarshal([]byte(stdout), &models); err != nil {
		t.Fatal(err)
	}
	byID := map[string]int{}
	for i, m := range models {
		byID[m.ID] = i
	}
	want := []struct{ id, source, label, key string }{
		{"ollama/llama3.1:8b", "configured", "on this machine", ""},
		{"demo/limited", "demo", "public", ""},
		{"groq/qwen/qwen3-32b", "catalogue", "public", "GROQ_API_KEY"},
	}
	for _, w := range want {
		i, ok := byID[w.id]
		if !ok {
			t.Fatalf("%s not listed", w.id)
		}
		if m := models[i]; m.Source != w.source || m.TierLabel != w.label || m.KeyEnv != w.key || m.Ready != (w.key == "") {
			t.Fatalf("%s: %+v", w.id, m)
		}
	}

	stdout, _, code = scrim(t, "", append(base, "models", "--provider", "ollama")...)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != exitOK || len(lines) != 5 || lines[0] != "ollama · configured · no key needed" || lines[1] != "  ollama/llama3.1:8b  tier on this machine" ||
		lines[3] != "tier local: tools read, grep, glob" {
		t.Fatalf("exit %d text %q", code, stdout)
	}
	// The whole listing, catalogue included, fits 80 columns with every ID whole.
	stdout, _, _ = scrim(t, "", append(base, "models")...)
	for _, line := range strings.Split(stdout, "\n") {
		if n := len([]rune(line)); n > modelsWidth {
			t.Errorf("%d columns: %q", n, line)
		}
	}
	for _, m := range models {
		if !strings.Contains(stdout, "  "+m.ID+"  ") && !strings.Contains(stdout, "  "+m.ID+"\n") {
			t.Errorf("%s is not listed whole", m.ID)
		}
	}
	stdout, _, _ = scrim(t, "", append(base, "models", "--provider", "groq")...)
	if !strings.Contains(stdout, "GROQ_API_KEY (not set)") {
		t.Fatalf("text %q", stdout)
	}

	if _, stderr, code = scrim(t, "", append(base, "models", "--format", "xml")...); code != exitUsage {
		t.Fatalf("bad format: exit %d %s", code, stderr)
	}
	if _, stderr, code = scrim(t, "", append(base, "models", "--provider", "nope")...); code != exitError || !strings.Contains(stderr, `no models of provider "nope"`) {
		t.Fatalf("unknown provider: exit %d %s", code, stderr)
	}
}
