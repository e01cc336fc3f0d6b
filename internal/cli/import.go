package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/scrim-dev/scrim/internal/cores"
	"github.com/scrim-dev/scrim/internal/memlimit"
	"github.com/scrim-dev/scrim/internal/termsafe"
	"github.com/scrim-dev/scrim/internal/userdirs"
	"github.com/scrim-dev/scrim/session/importers"
	"github.com/scrim-dev/scrim/session/importers/claude"
	"github.com/scrim-dev/scrim/session/importers/codex"
	"github.com/scrim-dev/scrim/session/importers/crush"
	"github.com/scrim-dev/scrim/session/importers/gemini"
	"github.com/scrim-dev/scrim/session/importers/opencode"
	"github.com/scrim-dev/scrim/session/importers/sqlitecopy"
)

// importer is one agent the import command knows: a JSON-lines transcript
// format read line by line (factory), or a source read whole (source).
type importer struct {
	factory importers.Factory
	source  *importers.Source
	// folder is where the agent keeps its sessions, under the home folder
	// ("": the current folder); env is the agent's own variable that moves
	// them, to its folder's under (agentFolder).
	folder, env, under string
	name               string // the agent, for messages
	match              func(path string) bool
	files              string                // what match takes, for messages
	prune              func(dir string) bool // folders a watch leaves out
	// database: each import copies the source whole, so a watch waits
	// longer before importing it again.
	database bool
}

func jsonl(path string) bool { return strings.HasSuffix(path, ".jsonl") }

var importerFor = map[string]importer{
	claude.Agent: {name: "Claude Code", factory: claude.New, folder: filepath.Join(".claude", "projects"), env: "CLAUDE_CONFIG_DIR", under: "projects", match: jsonl, files: "transcripts (*.jsonl)"},
	codex.Agent:  {name: "Codex", factory: codex.New, folder: filepath.Join(".codex", "sessions"), env: "CODEX_HOME", under: "sessions", match: jsonl, files: "transcripts (*.jsonl)"},
	gemini.Agent: {name: "Gemini CLI", source: &gemini.Source, folder: filepath.Join(".gemini", "tmp"), env: "GEMINI_CLI_HOME", under: filepath.Join(".gemini", "tmp"), match: gemini.Match, files: "sessions (session-*.json, session-*.jsonl, checkpoint-*.json)"},
	// Crush keeps a database in each project: the default is the current
	// folder's, and those of the projects under it.
	crush.Agent:    {name: "Crush", source: &crush.Source, match: crush.Match, database: true, files: "databases (.crush/crush.db)"},
	opencode.Agent: {name: "opencode", source: &opencode.Source, folder: filepath.Join(".local", "share", "opencode"), env: "XDG_DATA_HOME", under: "opencode", match: opencode.Match, prune: opencode.Prune, database: true, files: "databases (opencode.db) or stored sessions (storage/session/*/*.json)"},
}

// agentFolder is where agent keeps its sessions on this machine: under
// the folder its own variable names (CLAUDE_CONFIG_DIR, CODEX_HOME,
// GEMINI_CLI_HOME, XDG_DATA_HOME for opencode) when that is set to an
// absolute folder (or ~/…), else under the home folder. Each agent writes
// nothing to its usual folder when its variable is set, so that folder
// holds old sessions or none. "" for an agent without one (crush).
func agentFolder(agent string, env userdirs.Lookup) (string, error) {
	imp := importerFor[agent]
	if imp.folder == "" {
		return "", nil
	}
	if v, ok := userdirs.Folder(env, imp.env); ok {
		return filepath.Join(v, imp.under), nil
	}
	home, err := userdirs.Home(env)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, imp.folder), nil
}

// agentList is the agents, for messages: "claude, codex, … or opencode".
func agentList() string {
	names := slices.Sorted(maps.Keys(importerFor))
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func newImportCmd(a *app) *cobra.Command {
	var verbose bool
	cmd := &cobra.Command{
		Use:   "import claude|codex|crush|gemini|opencode [PATH...]",
		Short: "Import Claude Code, Codex, Crush, Gemini CLI or opencode sessions (files or folders)",
		Long: `Import Claude Code, Codex, Crush, Gemini CLI or opencode sessions into the
session store, recovering which files each tool result's content came from.

PATH is a session file or a folder searched recursively: for *.jsonl
transcripts (claude, codex), .crush/crush.db databases (crush),
session-*.json, session-*.jsonl and checkpoint-*.json files (gemini), and
opencode.db or the stored sessions of the older JSON storage (opencode; an
export written by opencode export is taken when named). Without PATH, each
agent's own folder: ~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp,
~/.local/share/opencode, or where the agent's variable moves it
($CLAUDE_CONFIG_DIR/projects, $CODEX_HOME/sessions,
$GEMINI_CLI_HOME/.gemini/tmp, $XDG_DATA_HOME/opencode); for crush, the
current folder (Crush keeps a database in each project). A database is read
from a copy: the agent's files are never opened in place.

Importing a transcript again adds only the lines it gained since (after any
messages added in scrim); a database or a Gemini CLI session, which are
rewritten as the agent works, add the messages each session gained. A
session that changed otherwise is imported afresh, replacing its old one
only where it holds nothing but what was imported: a session with messages
added in scrim is kept as it is.

Each file prints one summary line, and an import of many files a total line
at the end. On a terminal a progress bar (files, MB, rate, time left) stands
for the summary lines, unless --verbose; NO_COLOR turns its colours off.`,
		Args: usage(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runImport(args[0], args[1:], verbose)
		},
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print each file's summary line above the progress bar too")
	return cmd
}

// importMemoryLimit is the soft heap limit of an import on workers
// goroutines: what the store holds whatever the input (two memtable arenas
// and the table builder that flushes one, about 35 MiB) plus, per worker, a
// group of small files' messages waiting for their commit (up to 8 MiB) and
// the lines being parsed, with room for garbage. Measured on the 1,500-file
// tree (heap profiles at the peak): 50 MiB live with one worker, 121 MiB
// with eight. It is soft: a bigger live set only makes the collector run
// more often.
func importMemoryLimit(workers int) int64 {
	return 48<<20 + int64(workers)*12<<20
}

// longImport is the size of a single transcript that gets a progress bar
// on a terminal: a few seconds' import. A variable for tests.
var longImport int64 = 64 << 20

// importSettle bounds how long an import waits for the store's compactions
// once it has written everything: on the UI benchmark's session (a million
// short messages, 450 MB of tables) they took about 2 s.
const importSettle = 30 * time.Second

func (a *app) runImport(agent string, paths []string, verbose bool) error {
	imp, ok := importerFor[agent]
	if !ok {
		return usageError("unknown agent %q: use scrim import %s", agent, agentList())
	}
	var err error
	if len(paths) == 0 && imp.folder == "" {
		paths = []string{"."}
	}
	if len(paths) == 0 {
		dir, err := agentFolder(agent, a.lookupEnv)
		if err != nil {
			return fmt.Errorf("cannot find the home folder (%v); pass the transcripts' PATH", err)
		}
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no %s sessions to import: %s does not exist (where %s writes them; $%s moves them); pass PATH to import from elsewhere",
				imp.name, dir, imp.name, imp.env)
		}
		paths = []string{dir}
	}
	for i, p := range paths {
		if paths[i], err = userdirs.Expand(p, a.lookupEnv); err != nil {
			return err
		}
	}
	files, err := importers.Files(paths, imp.match)
	if err != nil {
		return fmt.Errorf("%v; pass a transcript file or folder", err)
	}
	if len(files) == 0 {
		return fmt.Errorf("no %s %s found in %s", agent, imp.files, strings.Join(paths, ", "))
	}
	a.importing = true
	st, err := a.Store()
	if err != nil {
		return err
	}
	// A policy that does not load is the preview's to refuse: the import
	// does not need one, and without it nothing is scanned now.
	if pol, err := a.Policy(); err == nil {
		scanOnImport(st, pol)
	}
	// An import makes short-lived copies of every line. Collect garbage at
	// 50% heap growth, not Go's 100%, and do not let the heap pass a limit
	// sized for the workers: a small heap (one transcript) is collected
	// rarely, a tree's (every worker holding a group of small files) at the
	// limit (README, Import memory). The limit follows the live heap where
	// that outgrows it: the store's compactions, which a long transcript of
	// small messages sets going, build tables in buffers that came to
	// 85-100 MB live; under a fixed 72 MiB the collector ran without pause
	// (a million-message transcript: 12,000 collections, 65-80 s against
	// 32-33 s).
	workers := cores.N()
	defer debug.SetGCPercent(debug.SetGCPercent(50))
	if debug.SetMemoryLimit(-1) == math.MaxInt64 { // unless the user set GOMEMLIMIT
		defer memlimit.Follow(importMemoryLimit(workers))()
	}
	// Many files on a terminal: a bar, not a screenful of lines scrolling by.
	// One long file: a bar that moves as it is read (a million-message
	// transcript takes half a minute), above the file's line.
	var bar *importProgress
	if tty, ok := a.progressTerminal(); ok {
		if sizes := fileSizes(files); len(files) > 1 || sizes[0] >= longImport {
			bar = a.newTerminalProgress(tty, sizes)
			bar.start()
			defer bar.close()
		}
	}
	// Stopped (Ctrl-C, SIGTERM), it leaves no copy of an agent's database
	// (Crush, opencode: every file the agent read) in the temporary folder.
	// The store is as a kill leaves it: each transcript whole or not at all.
	defer onInterrupt(func() {
		sqlitecopy.RemoveAll()
		bar.close()
	})()
	failed := 0
	var total importers.Stats
	var one error // the error of a single file, which is then the one line
	done := func(i int, res importers.Result, err error) {
		if err != nil {
			if len(files) == 1 {
				one = err
				return
			}
			failed++
			bar.println(a.stderr, "scrim: "+oneLine(termsafe.Inert(err.Error())))
			bar.fileDone(i, true)
			return
		}
		// File names are untrusted text: printed inert, on one line.
		if bar == nil || verbose || len(files) == 1 {
			bar.println(a.stdout, oneLine(termsafe.Inert(res.String())))
		}
		bar.fileDone(i, false)
		total.Messages += res.Messages
		total.Tagged += res.Tagged
		total.Unknown += res.Unknown
		total.Skipped += res.Skipped
	}
	if imp.source != nil {
		err = importers.ImportSources(st, *imp.source, files, done)
	} else {
		var read func(i int, n int64)
		if bar != nil {
			read = bar.fileRead
		}
		err = importers.ImportFilesReading(st, agent, files, imp.factory, workers, read, done)
	}
	if err != nil {
		return err
	}
	// The compactions the import left owing are done now, not beside the
	// first count of the TUI started next (session.Store.Settle).
	_, err = st.Settle(importSettle)
	bar.finish()
	if err != nil {
		return fmt.Errorf("everything was imported, but the store could not be opened again to settle it: %w", describeStoreErr(st.Dir(), err))
	}
	if one != nil {
		return one
	}
	if len(files) > 1 {
		fmt.Fprintf(a.stdout, "%s: %s, %s tagged, %s, %s\n",
			plural(len(files)-failed, "file", "files"), plural(total.Messages, "message", "messages"),
			plural(total.Tagged, "tool result", "tool results"), plural(total.Unknown, "unknown-source result", "unknown-source results"),
			plural(total.Skipped, "skipped line", "skipped lines"))
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d files could not be imported (see above); fix or remove them and import again", failed, len(files))
	}
	return nil
}
