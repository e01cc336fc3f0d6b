//go:build linux

package tools

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// groupWatch, run by sh -c with the command's argv as "$@", starts a watcher
// in the background and then execs the command, so that the command is still
// scrim's child and its group's leader. The watcher reads fd 3, a pipe whose
// only write end scrim holds: a line means the command is over; end of file
// means scrim is gone, however it died, and the watcher kills the group
// (kill 0), what the command started included. sh looks the command up in
// PATH as exec.Command did; it is sh and not bash so that no bash startup
// file (BASH_ENV) runs twice.
const groupWatch = `(read -r over <&3 || kill -KILL 0) </dev/null >/dev/null 2>&1 & exec "$@" 3<&-`

// runInGroup runs cmd as the leader of its own process group, killed as a
// whole on cancel or timeout and when scrim dies, so that a killed scrim
// leaves nothing of the command running.
//
// Pdeathsig kills the leader as soon as scrim dies, but it is not passed on
// to what the leader starts: the watcher is what reaches those. The kernel
// sends it when the thread that started the child ends, not the process
// (go.dev/issue/27505), and the Go runtime ends a thread when a goroutine
// locked to it returns without unlocking. So this goroutine keeps its thread
// from Start until Wait returns: no other goroutine runs on it meanwhile,
// and it cannot end under the command.
func runInGroup(cmd *exec.Cmd) error {
	if cmd.Err != nil {
		return cmd.Run() // bash is not installed: the same error as elsewhere
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	defer w.Close()
	cmd.Path = "/bin/sh"
	cmd.Args = append([]string{"sh", "-c", groupWatch, "sh"}, cmd.Args...)
	cmd.ExtraFiles = []*os.File{r}
	ownProcessGroup(cmd)
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err = cmd.Run()
	// The command is over: what it left running in the background stays, as
	// it did before and does on other systems; only scrim dying ends it.
	w.Write([]byte("\n"))
	return err
}
