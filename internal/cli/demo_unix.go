//go:build unix

package cli

import (
	"os"
	"os/signal"
	"syscall"
)

// removeOnSignal removes dir and exits when scrim gets SIGHUP or SIGTERM
// (the terminal or tmux was closed, the process was asked to stop): the TUI
// would not return, and its deferred removal would not run. stop undoes it.
func removeOnSignal(dir string) (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			os.RemoveAll(dir)
			os.Exit(128 + int(s.(syscall.Signal)))
		case <-done:
		}
	}()
	return func() { signal.Stop(sigs); close(done) }
}
