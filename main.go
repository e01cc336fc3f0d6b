// Command scrim manages stored AI coding-agent sessions and shows, for any
// model, exactly what that model would be sent. The CLI lives in
// internal/cli; this only hands it the process.
package main

import (
	"os"

	"github.com/scrim-dev/scrim/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], cli.OSEnv())) }
