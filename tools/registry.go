package tools

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	"github.com/scrim-dev/scrim/policy"
)

var registry = map[string]Tool{}

// register is called by each tool's file at init.
func register(t Tool) { registry[t.Name()] = t }

// Lookup finds a tool by name (read, grep, glob, bash, webfetch).
func Lookup(name string) (Tool, bool) {
	t, ok := registry[name]
	return t, ok
}

// All returns every tool, sorted by name.
func All() []Tool {
	out := make([]Tool, 0, len(registry))
	for _, t := range registry {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// Offered returns the tools the tier's models are offered, in the policy's
// order (read, grep, glob, bash, webfetch).
func Offered(t *policy.Tier) []Tool {
	var out []Tool
	for _, name := range policy.ToolNames {
		if tool, ok := registry[name]; ok && t.Offers(name) {
			out = append(out, tool)
		}
	}
	return out
}

// Run runs the named tool for env.Model, if the model's tier offers it. It
// is the one door to the tools: the runner (scrim send, the TUI's chat) and
// scrim tool both go through it. A tool the tier is not offered is refused,
// like a denied read, and nothing runs.
func Run(ctx context.Context, env Env, name string, input json.RawMessage) Result {
	tool, ok := registry[name]
	if !ok {
		r := errorResult(env, name, "unknown tool %q; the tools: %s", name, strings.Join(policy.ToolNames, ", "))
		return r
	}
	var tier *policy.Tier
	if env.Policy != nil {
		tier, _ = env.Policy.TierFor(env.Model)
	}
	if !tier.Offers(name) {
		label, offered := "none", "none"
		if tier != nil {
			label = tier.Label
			if len(tier.Tools) > 0 {
				offered = strings.Join(tier.Tools, ", ")
			}
		}
		r := errorResult(env, name, "tool %s is not offered to trust tier %q (its tools: %s); nothing ran", name, label, offered)
		r.Denied = true
		return r
	}
	return tool.Run(ctx, env, input)
}
