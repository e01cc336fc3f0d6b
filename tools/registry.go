package tools

import "sort"

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
