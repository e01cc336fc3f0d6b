package main

import (
	"github.com/spf13/cobra"

	"github.com/scrim-dev/scrim/ui"
)

// Plain `scrim` opens the TUI on the user's store.
func init() { rootRun = runTUI }

func runTUI(a *app, _ *cobra.Command) error {
	pol, err := a.Policy()
	if err != nil {
		return err
	}
	st, err := a.Store()
	if err != nil {
		return err
	}
	dir, err := a.StoreDir()
	if err != nil {
		return err
	}
	return ui.Run(ui.Config{Store: st, StoreDir: dir, Policy: pol}, a.stdin, a.stdout)
}
