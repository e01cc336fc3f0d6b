// Package policy owns trust tiers: which model maps to which tier, which paths
// a tier may read, and the one path canonicalisation that every other package
// uses. It answers "may this model read this path, and why?" and fails closed:
// a path that cannot be decided is denied, an unknown model gets the default
// tier, and a policy file with any error does not load at all.
//
// Where things are: load.go reads a file and finds it (Resolve); check.go
// validates the decoded TOML, and locate.go finds the line of each key and
// array element so that every problem names file:line; pattern.go expands and
// matches globs; canonical*.go resolves paths; policy.go maps models to tiers
// and decides.
//
// It imports nothing of scrim's own packages.
package policy
