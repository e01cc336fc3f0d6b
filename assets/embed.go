// Package assets holds the files scrim embeds: the default policy and the demo
// workspace, demo policy and demo scripts.
package assets

import (
	"embed"
	_ "embed"
)

// DefaultPolicy is the built-in policy used when no policy file is configured.
//
//go:embed policy.toml
var DefaultPolicy []byte

// Demo is the demo workspace (demo/...), extracted by `scrim demo`.
//
//go:embed all:demo
var Demo embed.FS
