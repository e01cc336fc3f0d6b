//go:build !unix

package tools

import "os/exec"

// ownProcessGroup: without process groups, cancel kills the command only.
func ownProcessGroup(*exec.Cmd) {}
