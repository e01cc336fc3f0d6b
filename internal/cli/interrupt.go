package cli

import (
	"os"
	"os/signal"
	"syscall"
)

// onInterrupt runs cleanup and exits, 128 plus the signal's number, when
// SIGINT or SIGTERM comes before stop is called; until then those signals
// no longer end the process at once. A stop called while cleanup runs
// waits for the exit, so that the command, failing on what cleanup
// removed, does not end the process first with an error of its own.
func onInterrupt(cleanup func()) (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			cleanup()
			code := 130
			if s, ok := sig.(syscall.Signal); ok {
				code = 128 + int(s)
			}
			os.Exit(code)
		case <-done:
			close(stopped)
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
		<-stopped
	}
}
