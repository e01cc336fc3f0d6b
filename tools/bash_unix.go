//go:build unix

package tools

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup makes the command lead its own process group and kills the
// whole group on cancel, so a timeout also ends what the command started.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
