package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/scrim-dev/scrim/assets"
	"github.com/scrim-dev/scrim/internal/termsafe"
	"github.com/scrim-dev/scrim/internal/userdirs"
	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/secrets"
	"github.com/scrim-dev/scrim/session"
)

// Exit codes of the CLI contract.
const (
	exitOK      = 0
	exitError   = 1
	exitUsage   = 2
	exitRefused = 3
)

// exitErr carries an exit code with the one-line message. A usage error
// ends with a pointer to the command's help unless hinted says the message
// already points somewhere.
type exitErr struct {
	code   int
	err    error
	hinted bool
}

func (e *exitErr) Error() string { return e.err.Error() }
func (e *exitErr) Unwrap() error { return e.err }

func usageError(format string, a ...any) error {
	return &exitErr{code: exitUsage, err: fmt.Errorf(format, a...)}
}

// usageHint is usageError for a message that says itself where to look.
func usageHint(format string, a ...any) error {
	return &exitErr{code: exitUsage, err: fmt.Errorf(format, a...), hinted: true}
}

func refusedError(format string, a ...any) error {
	return &exitErr{code: exitRefused, err: fmt.Errorf(format, a...)}
}

// Env is all scrim takes from the process it runs in: its environment
// variables, streams and clock. Tests pass their own, so that they can run
// side by side without touching the process's environment.
type Env struct {
	LookupEnv      func(string) (string, bool)
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Now            func() time.Time
}

// OSEnv is the process's own environment, streams and clock.
func OSEnv() Env {
	return Env{LookupEnv: os.LookupEnv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Now: time.Now}
}

// app is the state shared by all commands: global flags, the environment,
// and the policy and store, opened on first use and closed when the command
// ends.
type app struct {
	storeDir, policyFile, providersFile string
	// Plain scrim's: --watch [AGENT:]DIR (repeatable) and --no-watch.
	watchDirs []string
	noWatch   bool
	model     string // --model of plain scrim: the model active when the TUI opens
	noMouse   bool   // --no-mouse: the mouse stays the terminal's (text selection)

	lookupEnv      func(string) (string, bool)
	now            func() time.Time
	stdin          io.Reader
	stdout, stderr io.Writer

	pol   *policy.Policy
	store *session.Store
	// importing: the store is opened for an import, which settles it
	// before it closes (session.OpenToImport).
	importing bool
	// creates: the command may make the store where there is none (the
	// TUI, new, import). The others, which only read one (or add to a
	// session in it), refuse a folder that does not exist: a mistyped
	// --store made an empty store there, and said there were no sessions.
	creates bool
	tui     bool // the TUI ran: its heap is not returned before the store closes (see Main)
}

// Main runs scrim with args (without the program name) and returns its exit
// code.
func Main(args []string, env Env) (code int) {
	a := &app{lookupEnv: env.LookupEnv, now: env.Now, stdin: env.Stdin, stdout: env.Stdout, stderr: env.Stderr}
	if a.lookupEnv == nil {
		a.lookupEnv = func(string) (string, bool) { return "", false }
	}
	if a.now == nil {
		a.now = time.Now
	}
	stderr := a.stderr
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
				oneLine(termsafe.Inert(fmt.Sprint(r))), where)
			code = exitError
		}
		if a.store != nil {
			// Closing writes what the store holds back (the findings of a
			// first scan) and has Badger turn its memtable into a table,
			// whose builder takes a buffer of twice a table's size: the
			// garbage is returned to the system first, so that the buffer
			// reuses its room instead of adding to the process's peak
			// (with 256 KiB gathering pieces, the first preview of the
			// 20k benchmark session 17.6-18.8 MiB, 21.5 without this;
			// a collection alone, 19.8-19.9). Not after the TUI: its
			// peak is its count, and returning a heap of a million
			// messages' fingerprints added 0.4-0.6 s to quitting it.
			if !a.tui {
				debug.FreeOSMemory()
			}
			if err := a.store.Close(); err != nil && code == exitOK {
				fmt.Fprintf(stderr, "scrim: close session store: %v\n", err)
				code = exitError
			}
		}
	}()
	root := a.rootCommand()
	if completing(args) {
		a.addCompletions(root)
	}
	root.SetArgs(args)
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
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
	code = exitError
	var ee *exitErr
	if errors.As(err, &ee) {
		code = ee.code
	}
	if code == exitUsage && !ee.hinted && cmd != nil {
		msg += " (see: " + cmd.CommandPath() + " --help)"
	}
	// Messages quote paths, model IDs and provider errors: untrusted text.
	fmt.Fprintf(stderr, "scrim: %s\n", termsafe.Inert(msg))
	return code
}

// getenv is the environment variable k, "" when it is not set.
func (a *app) getenv(k string) string {
	v, _ := a.lookupEnv(k)
	return v
}

// usage makes the errors of a cobra argument check usage errors (exit 2):
// every command's Args goes through it, so that no error is classified by
// its text.
func usage(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &exitErr{code: exitUsage, err: err}
		}
		return nil
	}
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
		Args:          usage(noCommand),
		RunE:          func(*cobra.Command, []string) error { return a.runTUI() },
		Version:       version(),
		// Mistyped commands are offered the nearest ones (see noCommand).
		SuggestionsMinimumDistance: 2,
	}
	root.SetVersionTemplate("scrim {{.Version}}\n")
	root.PersistentFlags().StringVar(&a.storeDir, "store", "", "session store folder (default $SCRIM_STORE, else the user data folder)")
	root.PersistentFlags().StringVar(&a.policyFile, "policy", "", "policy file (default $SCRIM_POLICY, else <config>/scrim/policy.toml, else built-in)")
	root.PersistentFlags().StringVar(&a.providersFile, "providers", "", "providers file (default <config>/scrim/providers.toml)")
	root.Flags().StringArrayVar(&a.watchDirs, "watch", nil, "also watch the folder `[AGENT:]DIR` for sessions: claude:, codex:, crush:, gemini: or opencode:DIR (a bare DIR is the agent whose folder, .codex, .gemini, .crush or opencode, it is under, else claude); repeatable")
	root.Flags().StringVar(&a.model, "model", "", "the model active when the TUI opens, provider/model (default: the last model of the most recent session)")
	root.PersistentFlags().BoolVar(&a.noMouse, "no-mouse", false, "leave the mouse to the terminal (select text as usual); by default the wheel scrolls the view under it and a click opens a session")
	root.Flags().BoolVar(&a.noWatch, "no-watch", false, "do not import transcripts written while scrim is open (default: ~/.claude/projects and ~/.codex/sessions are watched; watch = false in <config>/scrim/config.toml)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitErr{code: exitUsage, err: err}
	})
	root.AddCommand(
		newSessionsCmd(a), newNewCmd(a), newShowCmd(a), newRmCmd(a), newRenameCmd(a),
		newImportCmd(a),
		newToolCmd(a),
		newRedactCmd(a), newExportCmd(a), newSearchCmd(a),
		newPolicyCmd(a),
		newSendCmd(a),
		newModelsCmd(a),
		newDemoCmd(a),
		newCheckCmd(a),
		newVersionCmd(a),
	)
	for _, c := range root.Commands() {
		requireSubcommand(c)
	}
	addExamples(root)
	return root
}

// noCommand is the root's argument check: plain scrim takes no arguments,
// so one is a mistyped command, and the nearest ones are offered (a group
// such as scrim tool lists all of its few instead: requireSubcommand).
func noCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return fmt.Errorf("unknown command %q for %q%s", args[0], cmd.CommandPath(), didYouMean(cmd, args[0]))
}

// didYouMean names the subcommands of cmd close to name ("" when none is).
func didYouMean(cmd *cobra.Command, name string) string {
	s := cmd.SuggestionsFor(name)
	if len(s) == 0 {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", strings.Join(s, `" or "`))
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
		p, err := policy.ResolveEnv(a.policyFile, assets.DefaultPolicy, a.lookupEnv)
		if err != nil {
			return nil, err
		}
		a.pol = p
	}
	return a.pol, nil
}

// scanOnImport has what st imports scanned for credentials as it is
// written (on the cores the import leaves spare), not by the first preview
// or count of each session (README, Performance), when a tier of pol
// redacts them: the findings are kept for those tiers only.
func scanOnImport(st *session.Store, pol *policy.Policy) {
	for _, t := range pol.Tiers {
		if t.RedactsSecrets() {
			st.ScanOnImport(secrets.Record)
			return
		}
	}
}

// StoreDir is --store, else $SCRIM_STORE, else <user data dir>/scrim/store.
func (a *app) StoreDir() (string, error) {
	if a.storeDir != "" {
		return userdirs.Expand(a.storeDir, a.lookupEnv)
	}
	if d := a.getenv("SCRIM_STORE"); d != "" {
		return userdirs.Expand(d, a.lookupEnv)
	}
	d, err := userdirs.Data(a.lookupEnv)
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
		if !a.creates && !a.importing {
			if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
				return nil, noStoreError{dir}
			}
		}
		if err := checkStoreDisk(dir); err != nil {
			return nil, err
		}
		open := session.Open
		if a.importing {
			open = session.OpenToImport
		}
		s, err := open(dir)
		if err != nil {
			return nil, describeStoreErr(dir, err)
		}
		a.store = s
	}
	return a.store, nil
}

// noStoreError: a command that only reads a store was given a folder that
// does not exist.
type noStoreError struct{ dir string }

func (e noStoreError) Error() string {
	return fmt.Sprintf("no session store at %s: nothing was imported or made there (check --store and $SCRIM_STORE; scrim import, scrim new or scrim itself make one)", inertLine(e.dir))
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
