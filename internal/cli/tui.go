package cli

import (
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/runner"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/ui"
)

// runTUI is plain `scrim`: the TUI on the user's store.
func (a *app) runTUI() error {
	pol, provs, err := a.policyAndProviders()
	if err != nil {
		return err
	}
	defer provs.Close()
	st, err := a.Store()
	if err != nil {
		return err
	}
	dir, err := a.StoreDir()
	if err != nil {
		return err
	}
	return ui.Run(a.tuiConfig(st, dir, pol, provs, ""), a.stdin, a.stdout)
}

// tuiConfig wires the TUI to the runner: the picker lists the runner's
// models (configured, demo, catalogue) and chat goes through runner.Send.
func (a *app) tuiConfig(st *session.Store, dir string, pol *policy.Policy, provs *runner.Providers, model string) ui.Config {
	var models []ui.ModelChoice
	for _, mi := range runner.Models(pol, provs) {
		note := mi.Source
		if !mi.Ready {
			note += " · needs $" + mi.KeyEnv
		}
		models = append(models, ui.ModelChoice{ID: mi.ID, Note: note})
	}
	return ui.Config{
		Store:    st,
		StoreDir: dir,
		Policy:   pol,
		Models:   models,
		Model:    model,
		Sender:   runner.New(st, pol, provs),
		Getenv:   a.getenv,
	}
}
