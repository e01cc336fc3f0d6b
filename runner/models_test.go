package runner

import (
	"testing"
)

func TestModels(t *testing.T) {
	e := newEnv(t, nil)
	ps := mustProviders(t, `[providers.ollama]
base_url = "http://127.0.0.1:11434/v1"
models = ["llama3.1:8b", "trusted"]

[providers.openai]
base_url = "https://proxy.example/v1"
models = ["gpt-internal"]
`)
	ps.Getenv = func(k string) string { return map[string]string{"GROQ_API_KEY": "x"}[k] }
	models := Models(e.pol, ps)
	byID := map[string]ModelInfo{}
	order := map[string]int{}
	for i, m := range models {
		if _, dup := byID[m.ID]; dup {
			t.Fatalf("model %s listed twice", m.ID)
		}
		byID[m.ID] = m
		order[m.ID] = i
	}
	cases := []struct {
		id, source, tier, keyEnv string
		ready                    bool
	}{
		{"ollama/llama3.1:8b", SourceConfigured, "public", "", true},
		{"ollama/trusted", SourceConfigured, "trusted", "", true},
		{"openai/gpt-internal", SourceConfigured, "public", "OPENAI_API_KEY", false},
		{"demo/trusted", SourceDemo, "trusted", "", true},
		{"demo/limited", SourceDemo, "limited", "", true},
		{"demo/public", SourceDemo, "public", "", true},
		{"groq/qwen/qwen3-32b", SourceCatalogue, "public", "GROQ_API_KEY", true},
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			m, ok := byID[c.id]
			if !ok {
				t.Fatalf("%s not listed", c.id)
			}
			if m.Source != c.source || m.Tier != c.tier || m.TierLabel != c.tier || m.KeyEnv != c.keyEnv || m.Ready != c.ready {
				t.Fatalf("got %+v", m)
			}
		})
	}
	// Configured first, then demo, then catalogue.
	if !(order["ollama/trusted"] < order["demo/trusted"] && order["demo/public"] < order["groq/qwen/qwen3-32b"]) {
		t.Fatal("wrong order")
	}
	for id, m := range byID {
		switch {
		case m.Provider == "openai" && m.Source == SourceCatalogue:
			t.Fatalf("%s: the configured openai replaces the catalogue's", id)
		case m.Provider == "bedrock" || m.Provider == "azure" || m.Provider == "copilot":
			t.Fatalf("%s: providers scrim cannot call are not listed", id)
		}
	}
	if m := byID["anthropic/claude-opus-4-6"]; m.Source != SourceCatalogue || m.Name == "" || m.KeyEnv != "ANTHROPIC_API_KEY" {
		t.Fatalf("catalogue model: %+v", m)
	}
}

// A policy that names demo/<x> literally lists it too.
func TestDemoModelsFromPolicy(t *testing.T) {
	e := newEnv(t, nil)
	e.pol.Models = append(e.pol.Models, e.pol.Models[0])
	e.pol.Models[len(e.pol.Models)-1].Match = "demo/auditor"
	got := demoModels(e.pol)
	if len(got) != 4 || got[3] != "auditor" {
		t.Fatalf("demo models %v", got)
	}
}

func BenchmarkModels(b *testing.B) {
	e := newEnv(b, nil)
	ps := mustProviders(b, "")
	b.ReportAllocs()
	for b.Loop() {
		Models(e.pol, ps)
	}
}
