package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scrim-dev/scrim/assets"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/ui"
)

// Exit codes of the CLI contract.
const (
	exitOK      = 0
	exitError   = 1
	exitUsage   = 2
	exitRefused = 3
)

// exitErr carries an exit code with the one-line message.
type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string { return e.err.Error() }
func (e *exitErr) Unwrap() error { return e.err }

func usageError(format string, a ...any) error {
	return &exitErr{exitUsage, fmt.Errorf(format, a...)}
}

func refusedError(format string, a ...any) error {
	return &exitErr{exitRefused, fmt.Errorf(format, a...)}
}

// app is the state shared by all commands: global flags, streams, and the
// policy and store, opened on first use and closed when the command ends.
type app struct {
	storeDir, policyFile, providersFile string

	stdin          io.Reader
	stdout, stderr io.Writer

	pol   *policy.Policy
	store *session.Store
}

// commands is filled by the cmd_*.go files' init functions.
var commands []func(*app) *cobra.Command

// rootRun is what plain `scrim` does (the TUI, set by cmd_tui.go); until set, help.
var rootRun func(a *app, cmd *cobra.Command) error

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	defer func() {
		if r := recover(); r != nil {
			// One line, never a trace: a panic is a bug of scrim's or of a
			// library's, and a damaged store is the likeliest cause of one
			// inside Badger.
			where := "scrim check"
			if a.store != nil {
				where += " " + a.store.Dir()
			}
			fmt.Fprintf(stderr, "scrim: internal error: %s (please report this; if the session store may be damaged, %s tells what can be recovered)\n",
				oneLine(ui.Inert(fmt.Sprint(r))), where)
			code = exitError
		}
		if a.store != nil {
			if err := a.store.Close(); err != nil && code == exitOK {
				fmt.Fprintf(stderr, "scrim: close session store: %v\n", err)
				code = exitError
			}
		}
	}()
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteC()
	if err == nil {
		return exitOK
	}
	var de *session.DamagedError
	if errors.As(err, &de) && de.Dir == "" && a.store != nil {
		de.Dir = a.store.Dir() // the store layer did not know which folder
	}
	msg := oneLine(err.Error())
	var ee *exitErr
	code = exitError
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case isUsage(err):
		code = exitUsage
	}
	if code == exitUsage && !strings.Contains(msg, "(see: ") && !strings.Contains(msg, "--help") && cmd != nil {
		msg += " (see: " + cmd.CommandPath() + " --help)"
	}
	// Messages quote paths, model IDs and provider errors: untrusted text.
	fmt.Fprintf(stderr, "scrim: %s\n", ui.Inert(msg))
	return code
}

// isUsage recognises cobra's own argument and flag errors.
func isUsage(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "flag needs an argument", "invalid argument", "accepts ", "requires at least", "requires at most", "required flag", "bad flag syntax"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", " ")
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "scrim",
		Short:         "Inspect AI coding-agent sessions and see exactly what each model would be sent",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if rootRun == nil {
				return cmd.Help()
			}
			return rootRun(a, cmd)
		},
	}
	root.PersistentFlags().StringVar(&a.storeDir, "store", "", "session store folder (default $SCRIM_STORE, else the user data folder)")
	root.PersistentFlags().StringVar(&a.policyFile, "policy", "", "policy file (default $SCRIM_POLICY, else <config>/scrim/policy.toml, else built-in)")
	root.PersistentFlags().StringVar(&a.providersFile, "providers", "", "providers file (default <config>/scrim/providers.toml)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError("%v (see: %s --help)", err, c.CommandPath())
	})
	for _, mk := range commands {
		root.AddCommand(mk(a))
	}
	for _, c := range root.Commands() {
		requireSubcommand(c)
	}
	return root
}

// requireSubcommand makes a command group (scrim tool, scrim policy) run
// without one of its subcommands, or with an unknown one, a usage error that
// names them, instead of help text and exit 0 that a script would take for
// success. --help still prints the help.
func requireSubcommand(c *cobra.Command) {
	for _, sub := range c.Commands() {
		requireSubcommand(sub)
	}
	if !c.HasSubCommands() {
		return
	}
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	list := strings.Join(names, ", ")
	c.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageError("unknown command %q for %q; it takes one of: %s", args[0], cmd.CommandPath(), list)
		}
		return nil
	}
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		return usageError("%s needs one of: %s", cmd.CommandPath(), list)
	}
}

// Policy loads the policy on first use.
func (a *app) Policy() (*policy.Policy, error) {
	if a.pol == nil {
		p, err := policy.Resolve(a.policyFile, assets.DefaultPolicy)
		if err != nil {
			return nil, err
		}
		a.pol = p
	}
	return a.pol, nil
}

// StoreDir is --store, else $SCRIM_STORE, else <user data dir>/scrim/store.
func (a *app) StoreDir() (string, error) {
	if a.storeDir != "" {
		return a.storeDir, nil
	}
	if d := os.Getenv("SCRIM_STORE"); d != "" {
		return d, nil
	}
	d, err := userDataDir()
	if err != nil {
		return "", fmt.Errorf("cannot find a folder for the session store (%v); pass --store DIR", err)
	}
	return filepath.Join(d, "scrim", "store"), nil
}

// Store opens the session store on first use; run closes it.
func (a *app) Store() (*session.Store, error) {
	if a.store == nil {
		dir, err := a.StoreDir()
		if err != nil {
			return nil, err
		}
		if err := checkStoreDisk(dir); err != nil {
			return nil, err
		}
		s, err := session.Open(dir)
		if err != nil {
			return nil, describeStoreErr(dir, err)
		}
		a.store = s
	}
	return a.store, nil
}

func userDataDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && runtime.GOOS != "darwin" && runtime.GOOS != "windows" {
		return d, nil
	}
	switch runtime.GOOS {
	case "windows":
		if d := os.Getenv("LocalAppData"); d != "" {
			return d, nil
		}
		return os.UserConfigDir()
	case "darwin":
		return os.UserConfigDir() // ~/Library/Application Support
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "share"), nil
}

// formatFlag adds --format text|json to cmd.
func formatFlag(cmd *cobra.Command, f *string) {
	cmd.Flags().StringVar(f, "format", "text", "output format: text or json")
}

func checkFormat(f string) error {
	if f != "text" && f != "json" {
		return usageError("--format must be text or json, not %q", f)
	}
	return nil
}
