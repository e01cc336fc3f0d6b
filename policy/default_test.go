package policy

import (
	"path/filepath"
	"testing"

	"github.com/scrim-dev/scrim/assets"
)

// TestEmbeddedDefaultPolicy checks representative decisions of the policy a
// fresh install runs with, on a real home folder.
func TestEmbeddedDefaultPolicy(t *testing.T) {
	root := tempRoot(t)
	home := filepath.Join(root, "home")
	t.Setenv("HOME", home)
	build(t, root,
		"home/.ssh/id_rsa", "home/.aws/credentials", "home/.config/gcloud/application_default_credentials.json",
		"home/.gnupg/private-keys-v1.d/k.key", "home/.netrc",
		"home/src/x.go", "home/src/app/.env", "home/src/app/.env.local", "home/src/app/config/secrets/db.txt",
		"home/src/app/certs/key.pem", "home/src/app/deploy/id_ed25519", "home/src/app/terraform.tfstate",
		"home/src/link-to-key -> ../.ssh/id_rsa", "home/src/app/README.md",
	)
	p, err := Parse(assets.DefaultPolicy, EmbeddedName)
	if err != nil {
		t.Fatalf("the embedded policy does not load: %v", err)
	}
	h := func(s string) string { return filepath.Join(home, s) }
	const (
		local   = "ollama/llama3.1:8b"
		cloud   = "anthropic/claude-sonnet-4-5"
		unknown = "someone/new-model"
	)
	tests := []struct {
		model, path string
		allowed     bool
		pattern     string
	}{
		{local, h(".ssh/id_rsa"), true, "/**"},
		{"lmstudio/qwen", h(".aws/credentials"), true, "/**"},
		{"llamacpp/x", h("src/app/.env"), true, "/**"},
		{cloud, h("src/x.go"), true, "/**"},
		{cloud, h("src/app/README.md"), true, "/**"},
		{cloud, h(".ssh/id_rsa"), false, "~/.ssh/**"},
		{cloud, h(".ssh/not-there-yet"), false, "~/.ssh/**"},
		{cloud, h(".aws/credentials"), false, "~/.aws/**"},
		{cloud, h(".config/gcloud/application_default_credentials.json"), false, "~/.config/gcloud/**"},
		{cloud, h(".gnupg/private-keys-v1.d/k.key"), false, "~/.gnupg/**"},
		{cloud, h(".netrc"), false, "~/.netrc"},
		{cloud, h("src/app/.env"), false, "**/.env"},
		{cloud, h("src/app/.env.local"), false, "**/.env.*"},
		{cloud, h("src/app/config/secrets/db.txt"), false, "**/secrets/**"},
		{cloud, h("src/app/certs/key.pem"), false, "**/*.pem"},
		{cloud, h("src/app/deploy/id_ed25519"), false, "**/id_ed25519*"},
		{cloud, h("src/app/terraform.tfstate"), false, "**/*.tfstate"},
		{cloud, h("src/link-to-key"), false, "~/.ssh/**"},
		{cloud, "/etc/shadow", false, "/etc/shadow*"},
		{cloud, "/proc/self/environ", false, "/proc/**/environ"},
		{"openrouter/anthropic/claude-sonnet-4-5", h(".ssh/id_rsa"), false, "~/.ssh/**"},
		{"openai/gpt-5", h("src/x.go"), true, "/**"},
		{unknown, h("src/x.go"), false, ""},
		{unknown, "/tmp", false, ""},
		{"", h("src/x.go"), false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.model+" "+tc.path, func(t *testing.T) {
			e := p.Explain(tc.model, tc.path)
			if e.Decision.Allowed != tc.allowed || e.Decision.Pattern != tc.pattern {
				t.Fatalf("tier %s: allowed %v by %q, want %v by %q (%s)", e.Tier.Name, e.Decision.Allowed, e.Decision.Pattern, tc.allowed, tc.pattern, e.Decision.Reason)
			}
		})
	}
	if tier, rule := p.TierFor(unknown); tier.Name != "untrusted" || rule != nil || len(tier.Read) != 0 {
		t.Fatalf("unknown model gets %s (rule %v)", tier.Name, rule)
	}
}
