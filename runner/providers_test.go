package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseProviders(t *testing.T) {
	good := `# company setup
[providers.ollama]
type = "openai-compat"
base_url = "http://127.0.0.1:11434/v1/"
models = ["llama3.1:8b", "qwen2.5-coder:7b"]

[providers.gateway]
base_url = "https://llm.example.internal/v1"
api_key_env = "GATEWAY_KEY"
headers = { "X-Team" = "sec" }

[providers.openai]            # a catalogue provider behind a proxy: keeps its key variable and models
base_url = "https://proxy.example.internal/openai/v1"
`
	ps, err := ParseProviders([]byte(good), "p.toml")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, base, key string
		models          int // -1: more than 5
		line            int
	}{
		{"ollama", "http://127.0.0.1:11434/v1", "", 2, 2},
		{"gateway", "https://llm.example.internal/v1", "GATEWAY_KEY", 0, 7},
		{"openai", "https://proxy.example.internal/openai/v1", "OPENAI_API_KEY", -1, 12},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := ps.Lookup(c.name)
			if err != nil {
				t.Fatal(err)
			}
			if p.BaseURL != c.base || p.APIKeyEnv != c.key || p.Source != SourceConfigured || p.Line != c.line || p.Type != TypeOpenAICompat {
				t.Fatalf("got %+v", p)
			}
			if c.models >= 0 && len(p.Models) != c.models || c.models < 0 && len(p.Models) < 5 {
				t.Fatalf("%d models", len(p.Models))
			}
		})
	}
	if p, _ := ps.Lookup("gateway"); p.Headers["X-Team"] != "sec" {
		t.Fatalf("headers %v", p.Headers)
	}
}

func TestParseProvidersErrorsNameFileAndLine(t *testing.T) {
	cases := []struct {
		name, toml, want string
	}{
		{"unknown key", "[providers.x]\nbase_url = \"http://h/v1\"\ntimeout = 3\n", "p.toml:3: unknown key \"providers.x.timeout\" (a provider takes"},
		{"unknown top-level", "[provider.x]\nbase_url = \"http://h/v1\"\n", "p.toml:1: unknown key \"provider.x\" (expected [providers.NAME] tables)"},
		{"unknown in inline table", "[providers]\nx = { base_url = \"http://h/v1\", colour = \"red\" }\n", "p.toml:2: unknown key"},
		{"bad type", "[providers.x]\ntype = \"anthropic\"\nbase_url = \"http://h/v1\"\n", "p.toml:2: provider \"x\": type \"anthropic\" is not supported"},
		{"bad url", "[providers.x]\n\nbase_url = \"localhost:11434\"\n", "p.toml:3: provider \"x\": base_url \"localhost:11434\" is not an http(s) URL"},
		{"no url", "[providers.x]\napi_key_env = \"K\"\n", "p.toml:1: provider \"x\": no base_url"},
		{"key with dollar", "[providers.x]\nbase_url = \"http://h/v1\"\napi_key_env = \"$MY_KEY\"\n", "p.toml:3: provider \"x\": api_key_env is the variable's name; write \"MY_KEY\" without the $"},
		{"key itself", "[providers.x]\nbase_url = \"http://h/v1\"\napi_key_env = \"sk-proj-abc\"\n", "never hold the key itself"},
		{"reserved demo", "[providers.demo]\nbase_url = \"http://h/v1\"\n", "p.toml:1: provider \"demo\": the name is reserved"},
		{"slash in name", "[providers.\"a/b\"]\nbase_url = \"http://h/v1\"\n", "p.toml:1: provider \"a/b\": a provider name may not"},
		{"wrong value type", "[providers.x]\nbase_url = \"http://h/v1\"\nheaders = \"X: y\"\n", "p.toml:3: provider \"x\": headers must be a table"},
		{"syntax", "[providers.x\nbase_url = 1\n", "p.toml:2: expected '.' or ']'"},
		{"value type", "[providers.x]\nbase_url = 1\n", "p.toml:2: providers.x.base_url: incompatible types"},
		{"bad header", "[providers.x]\nbase_url = \"http://h/v1\"\nheaders = { \"X Bad\" = \"1\" }\n", "p.toml:3: provider \"x\": header name \"X Bad\" is not valid"},
		{"key in the file", "[providers.x]\nbase_url = \"http://h/v1\"\napi_key = \"sk-1\"\n", "p.toml:3: unknown key \"providers.x.api_key\": keys never go in this file"},
		{"first error in file order", "[providers.zz]\nbase_url = \"ftp://a\"\n[providers.aa]\nbase_url = \"ftp://b\"\n", "p.toml:2: provider \"zz\""},
		{"empty model", "[providers.x]\nbase_url = \"http://h/v1\"\nmodels = [\"a\", \" \"]\n", "p.toml:3: provider \"x\": empty model name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseProviders([]byte(c.toml), "p.toml")
			if err == nil {
				t.Fatal("want an error")
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q, want one line containing %q", err, c.want)
			}
		})
	}
}

func TestLoadProvidersLocations(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("HOME", t.TempDir())
	// No file anywhere: nothing configured, no error.
	ps, err := LoadProviders("")
	if err != nil || ps.File != "" || len(ps.Configured()) != 0 {
		t.Fatalf("no file: %v %+v", err, ps)
	}
	// The default file is read when present.
	def := filepath.Join(cfg, "scrim", "providers.toml")
	mustWrite(t, def, "[providers.ollama]\nbase_url = \"http://127.0.0.1:11434/v1\"\n")
	ps, err = LoadProviders("")
	if err != nil || ps.File != def || len(ps.Configured()) != 1 {
		t.Fatalf("default file: %v %+v", err, ps)
	}
	// A named file must exist.
	_, err = LoadProviders(filepath.Join(cfg, "nope.toml"))
	if err == nil || !strings.Contains(err.Error(), "nope.toml: cannot read providers file") {
		t.Fatalf("missing named file: %v", err)
	}
	// A named file wins over the default.
	other := filepath.Join(cfg, "other.toml")
	mustWrite(t, other, "[providers.gw]\nbase_url = \"https://gw/v1\"\n")
	ps, err = LoadProviders(other)
	if err != nil || len(ps.Configured()) != 1 || ps.Configured()[0].Name != "gw" {
		t.Fatalf("named file: %v", err)
	}
	// Errors name the file as given.
	mustWrite(t, other, "[providers.gw]\nbase_url = \"https://gw/v1\"\nbogus = 1\n")
	if _, err = LoadProviders(other); err == nil || !strings.HasSuffix(strings.SplitN(err.Error(), ":", 2)[0], "other.toml") || !strings.Contains(err.Error(), ":3:") {
		t.Fatalf("error %v", err)
	}
	if _, err = LoadProviders(cfg); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("a folder: %v", err)
	}
	big := filepath.Join(cfg, "big.toml")
	if err := os.WriteFile(big, make([]byte, maxProvidersSize+10), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err = LoadProviders(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("big file: %v", err)
	}
}

func TestCatalogue(t *testing.T) {
	cases := []struct {
		name, base, key string
		unsupported     bool
	}{
		{"openai", "https://api.openai.com/v1", "OPENAI_API_KEY", false},
		{"anthropic", "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY", false},
		{"gemini", "https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY", false},
		{"groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY", false},
		{"openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", false},
		{"bedrock", "", "", true},
		{"azure", "", "AZURE_OPENAI_API_KEY", true},
		{"copilot", "https://api.githubcopilot.com", "", true},
	}
	ps := mustProviders(t, "")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := ps.Lookup(c.name)
			if err != nil {
				t.Fatal(err)
			}
			if p.BaseURL != c.base || p.APIKeyEnv != c.key || (p.Unsupported != "") != c.unsupported || p.Source != SourceCatalogue {
				t.Fatalf("got %+v", p)
			}
			if len(p.Headers) != 0 {
				t.Fatalf("catalogue headers are sent: %v", p.Headers)
			}
			_, _, err = ps.Connect(context.Background(), c.name+"/some-model", nil)
			switch {
			case c.unsupported && (err == nil || !strings.Contains(err.Error(), "providers.toml")):
				t.Fatalf("unsupported provider: %v", err)
			case !c.unsupported && (err == nil || !strings.Contains(err.Error(), "set "+c.key)):
				t.Fatalf("missing key: %v", err)
			}
		})
	}
	// With the key set, the catalogue provider connects (nothing is sent yet).
	ps.Getenv = func(k string) string { return map[string]string{"GROQ_API_KEY": "gsk"}[k] }
	lm, p, err := ps.Connect(context.Background(), "groq/llama-3.3-70b-versatile", nil)
	if err != nil || lm.Model() != "llama-3.3-70b-versatile" || p.Name != "groq" {
		t.Fatalf("connect: %v", err)
	}
}

func TestMissingHeaderVariable(t *testing.T) {
	ps := mustProviders(t, "[providers.gw]\nbase_url = \"https://gw/v1\"\nheaders = { \"X-Token\" = \"$GW_TOKEN\" }\n")
	_, _, err := ps.Connect(context.Background(), "gw/m", nil)
	if err == nil || !strings.Contains(err.Error(), `provider "gw": header X-Token uses $GW_TOKEN, which is not set`) {
		t.Fatalf("error %v", err)
	}
}

func TestSplitModel(t *testing.T) {
	cases := []struct{ in, prov, name string }{
		{"ollama/llama3.1:8b", "ollama", "llama3.1:8b"},
		{"openrouter/anthropic/claude-sonnet-4", "openrouter", "anthropic/claude-sonnet-4"},
		{"demo/limited", "demo", "limited"},
		{"x", "", ""},
		{"/m", "", ""},
		{"p/", "", ""},
	}
	for _, c := range cases {
		p, n, err := SplitModel(c.in)
		if p != c.prov || n != c.name || (err != nil) != (c.prov == "") {
			t.Errorf("SplitModel(%q) = %q, %q, %v", c.in, p, n, err)
		}
	}
}

// Any input either parses or fails with one line naming the file; never a panic.
func FuzzParseProviders(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/providers/*.toml")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := ParseProviders(data, "f.toml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.toml") {
				t.Fatalf("error does not name the file: %q", err)
			}
			return
		}
		for _, p := range ps.Configured() {
			if p.BaseURL == "" || p.Name == DemoProvider || strings.Contains(p.Name, "/") {
				t.Fatalf("accepted a provider it should refuse: %+v", p)
			}
		}
	})
}
