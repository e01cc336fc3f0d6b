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
// A second signal while cleanup runs exits without waiting for it.
func onInterrupt(cleanup func()) (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			// A second signal ends it at once, should cleanup hang (a
			// terminal that does not take output, a stuck file system).
			cleaned := make(chan struct{})
			go func() {
				cleanup()
				close(cleaned)
			}()
			select {
			case <-cleaned:
			case <-sigs:
			}
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
