package cli

import (
	"context"

	"github.com/scrim-dev/scrim/internal/watch"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/runner"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/ui"
)

// runTUI is plain `scrim`: the TUI on the user's store, importing the
// transcripts written to the watched folders while it is open.
func (a *app) runTUI() error {
	a.tui = true
	roots, watched, err := a.watchRoots()
	if err != nil {
		return err
	}
	pol, provs, err := a.policyAndProviders()
	if err != nil {
		return err
	}
	defer provs.Close()
	a.creates = true // a first start makes the store the watcher imports into
	st, err := a.Store()
	if err != nil {
		return err
	}
	dir, err := a.StoreDir()
	if err != nil {
		return err
	}
	cfg := a.tuiConfig(st, dir, pol, provs, a.model)
	if len(roots) > 0 {
		scanOnImport(st, pol)
		w := watch.New(st, roots)
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			w.Run(ctx)
		}()
		// The store closes after this returns: the file being imported,
		// if any, is finished first (an import is all or nothing).
		defer func() { cancel(); <-stopped }()
		cfg.Imports, cfg.Watching = w.Events(), watched
	}
	return ui.Run(cfg, a.stdin, a.stdout)
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
		Sender:   newRunner(st, pol, provs),
		Getenv:   a.getenv,
		NoMouse:  a.noMouse,
	}
}
