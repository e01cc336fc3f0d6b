package runner

import (
	"strings"

	"github.com/scrim-dev/scrim/policy"
)

// ModelInfo describes a model a user can pick.
type ModelInfo struct {
	ID        string   `json:"id"` // provider/model
	Name      string   `json:"name,omitempty"`
	Provider  string   `json:"provider"`
	Source    string   `json:"source"` // configured, catalogue or demo
	Tier      string   `json:"tier"`
	TierLabel string   `json:"tierLabel"`
	Tools     []string `json:"tools"` // what the tier's models are offered
	// KeyEnv is the variable that holds the provider's key ("" = none needed);
	// Ready says whether it is set, so a picker can show what still needs one.
	KeyEnv string `json:"keyEnv,omitempty"`
	Ready  bool   `json:"ready"`
}

// Models lists the models scrim can send to, with their tier under pol:
// configured providers' models first, then the demo's, then the catalogue's
// (in catwalk's order, main providers first). Catalogue providers that scrim
// cannot call are left out; a configured provider of the same name replaces
// its catalogue entry.
func Models(pol *policy.Policy, provs *Providers) []ModelInfo {
	var out []ModelInfo
	add := func(p Provider, model string) {
		id := p.Name + "/" + model
		tier, _ := pol.TierFor(id)
		mi := ModelInfo{ID: id, Name: p.Names[model], Provider: p.Name, Source: p.Source, Tier: tier.Name, TierLabel: tier.Label, Tools: tier.Tools, KeyEnv: p.APIKeyEnv, Ready: true}
		if p.APIKeyEnv != "" {
			mi.Ready = provs.getenv(p.APIKeyEnv) != ""
		}
		out = append(out, mi)
	}
	configured := map[string]bool{}
	if provs != nil {
		for _, p := range provs.Configured() {
			configured[p.Name] = true
			for _, m := range p.Models {
				add(p, m)
			}
		}
	}
	demo := Provider{Name: DemoProvider, Source: SourceDemo}
	for _, m := range demoModels(pol) {
		add(demo, m)
	}
	for _, p := range catalogueProviders() {
		if configured[p.Name] || p.Unsupported != "" {
			continue
		}
		for _, m := range p.Models {
			add(p, m)
		}
	}
	return out
}

// demoModels are DemoModels plus any demo/<name> a policy rule names
// literally, so a policy written for a demo lists its own models.
func demoModels(pol *policy.Policy) []string {
	out := append([]string(nil), DemoModels...)
	seen := map[string]bool{}
	for _, m := range out {
		seen[m] = true
	}
	for _, r := range pol.Models {
		name, ok := strings.CutPrefix(r.Match, DemoProvider+"/")
		if !ok || name == "" || strings.ContainsAny(name, `*?[]{}\/`) || seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, name)
	}
	return out
}
