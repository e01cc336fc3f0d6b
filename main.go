// Command scrim manages stored AI coding-agent sessions and shows, for any
// model, exactly what that model would be sent. main.go only wires the CLI:
// each cmd_*.go file adds its commands to the root.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
