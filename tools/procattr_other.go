//go:build !linux

package tools

import "os/exec"

// runInGroup runs cmd in its own process group where the system has them, so
// that a timeout or cancel kills what the command started too. Nothing here
// ties the command to scrim's life: a killed scrim leaves it running.
func runInGroup(cmd *exec.Cmd) error {
	ownProcessGroup(cmd)
	return cmd.Run()
}
